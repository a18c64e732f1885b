import { runCli } from './cli';
import { untilStopped } from './until-stopped';

// The published CLI, @resilience-score/cli (bundled into one file by sdks/cli/build.mjs): the commands a user runs
// against any deployment, without the product's own (product-commands.ts), which stay in the workspace's `rsd`.
void runCli(process.argv.slice(2), {
  env: process.env,
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  untilStopped,
  stderrIsTerminal: process.stderr.isTTY,
}).then((code) => {
  process.exitCode = code;
});
