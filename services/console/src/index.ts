// A service's public surface is its declaration (what the runner runs), its module and its configuration.
export { consoleServiceConfigSchema, type ConsoleServiceConfig } from './config';
export { createConsoleModule, type ConsoleModule, type ConsoleModuleDeps } from './console-module';
export { consoleService } from './service';
export { CONSOLE_SESSION_KEY } from './console/console-sessions';
