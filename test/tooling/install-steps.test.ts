import { execFileSync, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ScriptUse, scriptUse } from '../support/shell-script';

// scripts/install-steps.json names, for every script CI runs, each command it needs and where that
// command comes from: Debian's base system, the machine image, or a package the script's own install
// step brings. A fresh machine has only the first two, so a command that no install step brings fails
// here rather than an hour into a fresh machine's CI.

const ROOT = join(__dirname, '..', '..');

interface Installed {
  package: string;
  /** Set when the script never names the command itself: what runs it. */
  runBy?: string;
  /** Where the command is when it is not on the PATH: a glob of directories. */
  in?: string;
}
interface ScriptEntry {
  /** Scripts whose install steps have run before this one (their `installs` count as its own). */
  after?: string[];
  installs?: Record<string, Installed>;
}
interface ImageEntry {
  /** The scripts the Containerfile copies in and runs. */
  scripts: string[];
  installs: Record<string, Installed>;
}
interface Manifest {
  base: { commands: string[] };
  machine: { commands: string[] };
  scripts: Record<string, ScriptEntry>;
  images: Record<string, ImageEntry>;
}

const manifest = JSON.parse(readFileSync(join(ROOT, 'scripts/install-steps.json'), 'utf8')) as Manifest;
const shellBuiltins = new Set(execFileSync('bash', ['-c', 'compgen -b; compgen -k'], { encoding: 'utf8' }).split('\n'));
const uses = new Map<string, ScriptUse>();
/** The scripts' shared libraries: what a script that sources one runs or installs through it is the script's own use. */
const LIBRARIES = readdirSync(join(ROOT, 'scripts/lib'))
  .filter((name) => name.endsWith('.sh'))
  .map((name) => `scripts/lib/${name}`);
const use = (script: string): ScriptUse => {
  let found = uses.get(script);
  if (!found) {
    found = scriptUse(readFileSync(join(ROOT, script), 'utf8'), script);
    const sourced = [...found.sources].filter((source) => source !== '').map((source) => source.replace(/^\//, ''));
    const libraries = LIBRARIES.filter((library) => library !== script && sourced.some((source) => library.endsWith(source))).map(use);
    if (libraries.length > 0) {
      const functions = new Set(libraries.flatMap((library) => [...library.functions]));
      found = {
        ...found,
        commands: new Set(
          [...found.commands, ...libraries.flatMap((library) => [...library.commands])].filter((command) => !functions.has(command)),
        ),
        packages: new Set([...found.packages, ...libraries.flatMap((library) => [...library.packages])]),
      };
    }
    uses.set(script, found);
  }
  return found;
};

const lines = (text: string): string[] => text.split('\n').filter(Boolean);

/** Every shell script of the repository, and .ci/run. */
function allScripts(): string[] {
  const found: string[] = ['.ci/run'];
  const visit = (dir: string): void => {
    for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) visit(path);
      else if (entry.name.endsWith('.sh')) found.push(path);
    }
  };
  visit('scripts');
  return found.sort();
}

/**
 * The Debian package that owns each command, as dpkg says, for those on this machine: found on the
 * PATH, or in the directories of a glob (an `in` of the manifest). Merged /usr: /bin and /usr/bin alike.
 */
function owningPackages(commands: { command: string; in?: string | undefined }[]): Map<string, string> {
  const resolve = `
    for spec in "$@"; do
      command="\${spec%%|*}" dirs="\${spec#*|}" path=""
      if [[ -n "$dirs" ]]; then for path in $dirs/"$command"; do [[ -x "$path" ]] && break; path=""; done
      else path="$(command -v "$command")"; fi
      [[ "$path" == /* ]] || continue
      for candidate in "$path" "$(realpath "$path")"; do printf '%s\\t%s\\n' "$command" "$candidate" "$command" "\${candidate#/usr}"; done
    done`;
  const specs = commands.map(({ command, in: dirs }) => `${command}|${dirs ?? ''}`);
  const paths = lines(execFileSync('bash', ['-c', resolve, '_', ...specs], { encoding: 'utf8' })).map(
    (line) => line.split('\t') as [string, string],
  );
  // One dpkg call for every path: it prints `package: path` for each it knows and exits 1 if any is unknown.
  const { stdout } = spawnSync('dpkg', ['-S', ...new Set(paths.map(([, path]) => path))], { encoding: 'utf8' });
  const owner = new Map(lines(stdout).map((line) => [line.slice(line.indexOf(': ') + 2), line.slice(0, line.indexOf(':'))]));
  const owners = new Map<string, string>();
  for (const [command, path] of paths) if (!owners.has(command) && owner.has(path)) owners.set(command, owner.get(path) ?? '');
  return owners;
}

/** One dpkg field of each package dpkg knows, in one call (it exits 1 for those it does not know). */
function dpkgFields(packages: string[], field: string): Map<string, string> {
  const { stdout } = spawnSync('dpkg-query', ['-W', '-f', `\${Package}\t\${${field}}\n`, ...packages], { encoding: 'utf8' });
  return new Map(
    stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => line.split('\t') as [string, string]),
  );
}

/** A package and every installed package it depends on, however deep (`postgresql` pulls in `postgresql-client-15`). */
function pulledIn(pkg: string): Set<string> {
  const seen = new Set([pkg]);
  for (let frontier = [pkg]; frontier.length > 0;) {
    const depends = [...dpkgFields(frontier, 'Depends').values()].flatMap((list) =>
      list.split(/[,|]/).map((d) => d.trim().split(/[\s:]/)[0] ?? ''),
    );
    frontier = depends.filter((d) => d !== '' && !seen.has(d));
    for (const d of frontier) seen.add(d);
  }
  return seen;
}

/**
 * What a Containerfile installs (the packages of `apt-get install` in its RUN instructions, read by the
 * same shell parser), the files it copies in, and where they go (a command a script names by such a
 * path, or by such a name, is there).
 */
function containerfileUse(containerfile: string): { packages: Set<string>; sources: Set<string>; copied: Set<string> } {
  const instructions = readFileSync(join(ROOT, containerfile), 'utf8').replace(/\\\n/g, ' ').split('\n');
  const runs = instructions.filter((line) => line.startsWith('RUN ')).map((line) => line.slice('RUN '.length));
  const sources = new Set<string>();
  const copied = new Set<string>();
  for (const line of instructions.filter((l) => l.startsWith('COPY '))) {
    const [source = '', target = ''] = line
      .split(/\s+/)
      .slice(1)
      .filter((word) => !word.startsWith('--'));
    const path = target.endsWith('/') ? target + source.replace(/\/$/, '').split('/').pop()! : target;
    sources.add(source);
    copied.add(path);
    copied.add(path.split('/').pop()!);
  }
  return { packages: scriptUse(runs.join('\n'), containerfile).packages, sources, copied };
}

describe('scripts/install-steps.json: every command of every install step comes from somewhere a fresh machine has', () => {
  const scripts = Object.keys(manifest.scripts);

  it('when a script runs on the machine or in an image, then the manifest has one entry for it, and every entry is a script', () => {
    const inImages = Object.values(manifest.images).flatMap((image) => image.scripts);
    expect([...scripts, ...inImages].sort()).toEqual(allScripts());
  });

  it.each(scripts)("when %s names a command, then it is a builtin, its own function, base, the machine's, or installed", (script) => {
    const entry = manifest.scripts[script] ?? {};
    const provided = new Set([
      ...manifest.base.commands,
      ...manifest.machine.commands,
      ...[script, ...(entry.after ?? [])].flatMap((s) => Object.keys(manifest.scripts[s]?.installs ?? {})),
    ]);
    const unprovided = [...use(script).commands].filter((command) => !shellBuiltins.has(command) && !provided.has(command));
    expect(unprovided).toEqual([]);
  });

  it.each(scripts)("when %s's manifest says a package brings a command, then the script installs that package", (script) => {
    const installed = use(script).packages;
    const missing = Object.entries(manifest.scripts[script]?.installs ?? {})
      .filter(([, { package: pkg }]) => !installed.has(pkg))
      .map(([command, { package: pkg }]) => `${command} (${pkg})`);
    expect(missing).toEqual([]);
  });

  it('when Podman is installed, then iptables is too: netavark runs it for every container network', () => {
    expect(manifest.scripts['scripts/containers.sh']?.installs?.iptables).toMatchObject({ package: 'iptables' });
    expect(use('scripts/containers.sh').packages).toContain('iptables');
  });

  it('when a base command is on this machine, then dpkg says it comes from an Essential or Required package', () => {
    const owners = owningPackages(manifest.base.commands.filter((command) => !shellBuiltins.has(command)).map((command) => ({ command })));
    const essential = dpkgFields([...new Set(owners.values())], 'Essential');
    const priority = dpkgFields([...new Set(owners.values())], 'Priority');
    const notBase = [...owners]
      .filter(([, pkg]) => essential.get(pkg) !== 'yes' && priority.get(pkg) !== 'required')
      .map(([command, pkg]) => `${command} (${pkg})`);
    expect(notBase).toEqual([]);
  });

  it("when an installed command is on this machine, then dpkg says the manifest's package or one it pulls in owns it", () => {
    const installs = Object.values(manifest.scripts).flatMap((entry) => Object.entries(entry.installs ?? {}));
    const owners = owningPackages(installs.map(([command, { in: dirs }]) => ({ command, in: dirs })));
    const wrong = installs
      .filter(([command, { package: pkg }]) => owners.has(command) && !pulledIn(pkg).has(owners.get(command) ?? ''))
      .map(([command, { package: pkg }]) => `${command}: dpkg says ${owners.get(command)}, the manifest ${pkg}`);
    expect(wrong).toEqual([]);
  });

  it.each(Object.keys(manifest.images))(
    'when %s copies a script in, then every command it names is in the base image, installed by the image or copied in',
    (containerfile) => {
      const image = manifest.images[containerfile]!;
      const { packages, sources, copied } = containerfileUse(containerfile);
      const provided = new Set([...manifest.base.commands, ...Object.keys(image.installs), ...copied]);
      const unprovided = image.scripts.flatMap((script) =>
        [...use(script).commands].filter((command) => !shellBuiltins.has(command) && !provided.has(command)).map((c) => `${script}: ${c}`),
      );
      expect(unprovided).toEqual([]);
      const missing = Object.entries(image.installs).filter(([, { package: pkg }]) => !packages.has(pkg));
      expect(missing).toEqual([]);
      expect(image.scripts.filter((script) => !sources.has(script.split('/').pop()!))).toEqual([]);
    },
  );

  it('when the parser reads a script, then it finds wrapped commands, installs, arrays and sourced files, and not functions', () => {
    const source = [
      'source "$ROOT/scripts/lib/common.sh"',
      'APT_PACKAGES=(podman iptables)',
      'build() { nice -n 10 podman build .; }',
      'apt_install redis-server',
      '$sudo apt-get install -y -q --no-install-recommends chromium',
      'x="$(timeout 5 curl -fsS http://d | grep -q ok)"',
      'env A=b setsid "$PROMTOOL" check',
      'env -u SECRET -u OTHER node x.js',
      'build',
    ].join('\n');
    const { commands, packages, sources } = scriptUse(source, 'example.sh');
    expect([...commands].sort()).toEqual(['apt_install', 'curl', 'env', 'grep', 'nice', 'node', 'podman', 'setsid', 'source', 'timeout']);
    expect([...sources]).toEqual(['/scripts/lib/common.sh']);
    expect([...packages].sort()).toEqual(['chromium', 'iptables', 'podman', 'redis-server']);
  });
});
