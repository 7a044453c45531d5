/** After each test of `npm test`: what the test started ends with it (testScope.ts). */
import { endTestScope } from './testScope';

afterEach(endTestScope);
