/**
 * Theme variables for the test page. In VS Code the workbench injects these into every webview;
 * the values below are those of the Light Modern and Dark Modern themes (enough of them to judge a
 * screenshot). The body rules stand in for the workbench's default webview styles and the view's
 * background.
 */

const common = `
  --vscode-font-family: system-ui, "Ubuntu", "Droid Sans", sans-serif;
  --vscode-font-size: 13px;
  --vscode-font-weight: normal;
  --vscode-editor-font-family: "DejaVu Sans Mono", "Droid Sans Mono", monospace;
  --vscode-editor-font-size: 12px;
`;

export const DARK = `:root {${common}
  --vscode-foreground: #cccccc;
  --vscode-descriptionForeground: #9d9d9d;
  --vscode-errorForeground: #f85149;
  --vscode-sideBar-background: #181818;
  --vscode-editor-background: #1f1f1f;
  --vscode-editor-foreground: #cccccc;
  --vscode-button-background: #0078d4;
  --vscode-button-foreground: #ffffff;
  --vscode-button-hoverBackground: #026ec1;
  --vscode-button-border: #ffffff12;
  --vscode-button-secondaryBackground: #313131;
  --vscode-button-secondaryForeground: #cccccc;
  --vscode-button-secondaryHoverBackground: #3c3c3c;
  --vscode-dropdown-background: #313131;
  --vscode-dropdown-foreground: #cccccc;
  --vscode-dropdown-border: #3c3c3c;
  --vscode-input-background: #313131;
  --vscode-input-foreground: #cccccc;
  --vscode-input-border: #3c3c3c;
  --vscode-input-placeholderForeground: #989898;
  --vscode-focusBorder: #0078d4;
  --vscode-badge-background: #616161;
  --vscode-activityBarBadge-background: #0078d4;
  --vscode-activityBarBadge-foreground: #ffffff;
  --vscode-badge-foreground: #f8f8f8;
  --vscode-textLink-foreground: #4daafc;
  --vscode-textLink-activeForeground: #4daafc;
  --vscode-textPreformat-foreground: #d0d0d0;
  --vscode-textPreformat-background: #3c3c3c;
  --vscode-textCodeBlock-background: #2b2b2b;
  --vscode-textBlockQuote-background: #2b2b2b;
  --vscode-textBlockQuote-border: #616161;
  --vscode-widget-border: #313131;
  --vscode-panel-border: #2b2b2b;
  --vscode-toolbar-hoverBackground: #5a5d5e50;
  --vscode-inputValidation-warningBackground: #352a05;
  --vscode-inputValidation-warningBorder: #b89500;
  --vscode-inputValidation-errorBackground: #5a1d1d;
  --vscode-inputValidation-errorBorder: #be1100;
  --vscode-chat-requestBackground: #1f1f1f;
  --vscode-chat-requestBorder: #ffffff1a;
  --vscode-debugTokenExpression-name: #c586c0;
  --vscode-debugTokenExpression-string: #ce9178;
  --vscode-debugTokenExpression-number: #b5cea8;
  --vscode-debugTokenExpression-boolean: #4e94ce;
  --vscode-symbolIcon-functionForeground: #b180d7;
  --vscode-symbolIcon-classForeground: #ee9d28;
  --vscode-symbolIcon-variableForeground: #75beff;
  --vscode-gitDecoration-addedResourceForeground: #81b88b;
  --vscode-gitDecoration-deletedResourceForeground: #c74e39;
}
body { background-color: var(--vscode-sideBar-background); }
`;

export const LIGHT = `:root {${common}
  --vscode-foreground: #3b3b3b;
  --vscode-descriptionForeground: #717171;
  --vscode-errorForeground: #c72e0f;
  --vscode-sideBar-background: #f8f8f8;
  --vscode-editor-background: #ffffff;
  --vscode-editor-foreground: #3b3b3b;
  --vscode-button-background: #005fb8;
  --vscode-button-foreground: #ffffff;
  --vscode-button-hoverBackground: #0258a8;
  --vscode-button-border: #0000001a;
  --vscode-button-secondaryBackground: #e5e5e5;
  --vscode-button-secondaryForeground: #3b3b3b;
  --vscode-button-secondaryHoverBackground: #cccccc;
  --vscode-dropdown-background: #ffffff;
  --vscode-dropdown-foreground: #3b3b3b;
  --vscode-dropdown-border: #cecece;
  --vscode-input-background: #ffffff;
  --vscode-input-foreground: #3b3b3b;
  --vscode-input-border: #cecece;
  --vscode-input-placeholderForeground: #767676;
  --vscode-focusBorder: #005fb8;
  --vscode-badge-background: #cccccc;
  --vscode-activityBarBadge-background: #005fb8;
  --vscode-activityBarBadge-foreground: #ffffff;
  --vscode-badge-foreground: #3b3b3b;
  --vscode-textLink-foreground: #005fb8;
  --vscode-textLink-activeForeground: #005fb8;
  --vscode-textPreformat-foreground: #3b3b3b;
  --vscode-textPreformat-background: #0000001f;
  --vscode-textCodeBlock-background: #f2f2f2;
  --vscode-textBlockQuote-background: #f2f2f2;
  --vscode-textBlockQuote-border: #e5e5e5;
  --vscode-widget-border: #e5e5e5;
  --vscode-panel-border: #e5e5e5;
  --vscode-toolbar-hoverBackground: #b8b8b850;
  --vscode-inputValidation-warningBackground: #f6f5d2;
  --vscode-inputValidation-warningBorder: #b89500;
  --vscode-inputValidation-errorBackground: #f2dede;
  --vscode-inputValidation-errorBorder: #be1100;
  --vscode-chat-requestBackground: #ffffff;
  --vscode-chat-requestBorder: #0000001a;
  --vscode-debugTokenExpression-name: #9b46b0;
  --vscode-debugTokenExpression-string: #a31515;
  --vscode-debugTokenExpression-number: #098658;
  --vscode-debugTokenExpression-boolean: #0000ff;
  --vscode-symbolIcon-functionForeground: #652d90;
  --vscode-symbolIcon-classForeground: #d67e00;
  --vscode-symbolIcon-variableForeground: #007acc;
  --vscode-gitDecoration-addedResourceForeground: #587c0c;
  --vscode-gitDecoration-deletedResourceForeground: #ad0707;
}
body { background-color: var(--vscode-sideBar-background); }
`;
