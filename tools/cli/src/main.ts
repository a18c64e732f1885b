import { runCli } from './cli';
import { addProductCommands } from './product-commands';
import { untilStopped } from './until-stopped';

// The workspace's `rsd`: the CLI and the product's own commands (published.ts is the CLI alone).
void runCli(
  process.argv.slice(2),
  {
    env: process.env,
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    untilStopped,
    stderrIsTerminal: process.stderr.isTTY,
  },
  { productCommands: addProductCommands },
).then((code) => {
  process.exitCode = code;
});
