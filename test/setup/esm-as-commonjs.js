// Jest runs CommonJS, and the TypeScript SDK is an ES module package (Node16 emits ESM for it). ts-jest
// keeps one configuration per jest project whatever the transform entry says, so this transpiles the
// SDK's files on its own, as CommonJS; `tsc -b` type-checks them.
const { createHash } = require('node:crypto');
const ts = require('typescript');

const compilerOptions = {
  module: ts.ModuleKind.CommonJS,
  target: ts.ScriptTarget.ES2022,
  esModuleInterop: true,
  sourceMap: true,
  inlineSources: true,
};

module.exports = {
  getCacheKey: (source, filename) => createHash('sha256').update(`${__filename}\0${ts.version}\0${filename}\0${source}`).digest('hex'),
  process(source, filename) {
    const { outputText, sourceMapText } = ts.transpileModule(source, { fileName: filename, compilerOptions });
    return { code: outputText, map: sourceMapText };
  },
};
