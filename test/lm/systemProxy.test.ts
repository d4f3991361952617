import { describeSystemProxy } from '../integration/systemProxyScenario';

describeSystemProxy('A PAC script that VS Code follows, in a real extension host (VS Code 1.139)');
