import { runCli } from './cli';
import { untilStopped } from './until-stopped';

void runCli(process.argv.slice(2), {
  env: process.env,
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  untilStopped,
}).then((code) => {
  process.exitCode = code;
});
