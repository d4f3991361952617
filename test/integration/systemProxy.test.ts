import { describeSystemProxy } from './systemProxyScenario';

describeSystemProxy('A PAC script that VS Code follows, in a real extension host');
