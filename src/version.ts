// The program's version. A constant, not read from package.json at run time: dist/server.js is
// copied alone to the host, without package.json beside it. test/version.test.ts keeps the two equal.
export const VERSION = '0.2.0';
