// Command dockerfile-check checks a Dockerfile without a Docker engine or a registry:
//
//  1. BuildKit's own front end converts every stage, as `docker build --check` does: parse errors,
//     unknown stages in --from, bad flags and undefined variables fail, and each lint rule's
//     warning is reported. Base images are not pulled: their configuration is stubbed.
//  2. Every COPY/ADD source taken from the build context exists there once .dockerignore is
//     applied (BuildKit's pattern matcher), so an ignore rule cannot silently empty a COPY.
//  3. Every COPY --from names an earlier stage (BuildKit would take an unknown name for an image
//     to pull, so a typo in a stage name passes its own checks).
//  4. No ENV or ARG name looks like a secret. This is BuildKit's SecretsUsedInArgOrEnv rule less
//     its false positives on listen addresses (CREDENTIALS_HOST, *_PORT), so a Dockerfile may
//     skip that rule (# check=skip=SecretsUsedInArgOrEnv) without losing the check.
//
// Usage: dockerfile-check [-context DIR] [-file Dockerfile] [-print-context]. Exit status 1 on any
// finding; -print-context only lists the files a builder would receive.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/moby/buildkit/client/llb"
	"github.com/moby/buildkit/client/llb/sourceresolver"
	"github.com/moby/buildkit/frontend/dockerfile/dockerfile2llb"
	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/buildkit/frontend/dockerfile/parser"
	"github.com/moby/patternmatcher"
	"github.com/moby/patternmatcher/ignorefile"
	digest "github.com/opencontainers/go-digest"
	ocispecs "github.com/opencontainers/image-spec/specs-go/v1"
)

func main() {
	contextDir := flag.String("context", ".", "build context directory")
	file := flag.String("file", "Dockerfile", "Dockerfile, relative to the context")
	printContext := flag.Bool("print-context", false, "list the files sent to the builder and exit")
	flag.Parse()

	if *printContext {
		files, err := contextFiles(*contextDir)
		if err != nil {
			fail(err)
		}
		for _, f := range files {
			fmt.Println(f)
		}
		return
	}

	dt, err := os.ReadFile(filepath.Join(*contextDir, *file))
	if err != nil {
		fail(err)
	}
	findings := lint(*file, dt)
	contextFindings, err := checkContextSources(*contextDir, dt)
	if err != nil {
		fail(err)
	}
	findings = append(findings, contextFindings...)
	secretFindings, err := checkSecretNames(dt)
	if err != nil {
		fail(err)
	}
	findings = append(findings, secretFindings...)

	for _, finding := range findings {
		fmt.Printf("FAIL %s: %s\n", *file, finding)
	}
	if len(findings) > 0 {
		os.Exit(1)
	}
	fmt.Printf("ok   %s: BuildKit conversion and lint rules pass; every context source exists after .dockerignore\n", *file)
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "dockerfile-check: %v\n", err)
	os.Exit(2)
}

// lint runs BuildKit's Dockerfile front end over every stage with all lint rules.
func lint(file string, dt []byte) []string {
	sourceMap := llb.NewSourceMap(nil, file, "Dockerfile", dt)
	sourceMap.Definition = &llb.Definition{}
	results, err := dockerfile2llb.DockerfileLint(context.Background(), dt, dockerfile2llb.ConvertOpt{
		MetaResolver: stubResolver{},
		SourceMap:    sourceMap,
	})
	if err != nil {
		return []string{err.Error()}
	}
	var findings []string
	for _, warning := range results.Warnings {
		line := 0
		if warning.Location != nil && len(warning.Location.Ranges) > 0 {
			line = int(warning.Location.Ranges[0].Start.Line)
		}
		findings = append(findings, fmt.Sprintf("line %d: lint %s: %s (%s)", line, warning.RuleName, warning.Detail, warning.URL))
	}
	if results.Error != nil {
		line := 0
		if len(results.Error.Location.Ranges) > 0 {
			line = int(results.Error.Location.Ranges[0].Start.Line)
		}
		findings = append(findings, fmt.Sprintf("line %d: %s", line, results.Error.Message))
	}
	return findings
}

// stubResolver answers for any base image with a minimal Linux image configuration, so the
// conversion runs offline; what it checks does not depend on the base image's contents.
type stubResolver struct{}

func (stubResolver) ResolveImageConfig(_ context.Context, ref string, opt sourceresolver.Opt) (string, digest.Digest, []byte, error) {
	platform := ocispecs.Platform{OS: "linux", Architecture: "amd64"}
	if opt.Platform != nil {
		platform = *opt.Platform
	}
	config, err := json.Marshal(ocispecs.Image{
		Platform: platform,
		Config: ocispecs.ImageConfig{
			Env: []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
		},
		RootFS: ocispecs.RootFS{Type: "layers"},
	})
	if err != nil {
		return "", "", nil, err
	}
	return ref, digest.FromBytes(config), config, nil
}

// checkContextSources reports COPY/ADD sources from the build context that match no file the
// context would send, .dockerignore applied.
func checkContextSources(contextDir string, dt []byte) ([]string, error) {
	files, err := contextFiles(contextDir)
	if err != nil {
		return nil, err
	}
	stages, _, err := parseStages(dt)
	if err != nil {
		return nil, err
	}
	var findings []string
	earlier := map[string]bool{}
	for index, stage := range stages {
		for _, command := range stage.Commands {
			var sources []string
			switch c := command.(type) {
			case *instructions.CopyCommand:
				if c.From != "" {
					if !earlier[strings.ToLower(c.From)] && !strings.ContainsAny(c.From, "/:$") {
						findings = append(findings, fmt.Sprintf("line %d: COPY --from=%s names no earlier stage", lineOf(command), c.From))
					}
					continue
				}
				sources = c.SourcePaths
			case *instructions.AddCommand:
				sources = c.SourcePaths
			default:
				continue
			}
			for _, source := range sources {
				if strings.Contains(source, "://") || strings.Contains(source, "$") {
					continue
				}
				if !anyFileMatches(files, source) {
					findings = append(findings, fmt.Sprintf("line %d: %s: source %q is not in the build context (missing, or excluded by .dockerignore)", lineOf(command), strings.ToUpper(command.Name()), source))
				}
			}
		}
		earlier[fmt.Sprint(index)] = true
		if stage.Name != "" {
			earlier[strings.ToLower(stage.Name)] = true
		}
	}
	return findings, nil
}

// parseStages parses the Dockerfile into its stages and the ARGs before its first FROM.
func parseStages(dt []byte) ([]instructions.Stage, []instructions.ArgCommand, error) {
	ast, err := parser.Parse(bytes.NewReader(dt))
	if err != nil {
		return nil, nil, err
	}
	return instructions.Parse(ast.AST, nil)
}

func lineOf(command instructions.Command) int {
	if locations := command.Location(); len(locations) > 0 {
		return locations[0].Start.Line
	}
	return 0
}

var (
	secretName  = regexp.MustCompile(`(?i)(?:_|^)(?:apikey|auth|credentials?|key|password|pword|passwd|secret|token|jwt)(?:_|$)`)
	addressName = regexp.MustCompile(`(?i)_(?:HOST|PORT)$`)
)

// checkSecretNames reports ENV and ARG names that look like they carry a secret.
func checkSecretNames(dt []byte) ([]string, error) {
	stages, metaArgs, err := parseStages(dt)
	if err != nil {
		return nil, err
	}
	var findings []string
	report := func(kind, name string, command instructions.Command) {
		if !secretName.MatchString(name) || addressName.MatchString(name) {
			return
		}
		findings = append(findings, fmt.Sprintf("line %d: %s %q looks like a secret: pass secrets at run time, never in the image", lineOf(command), kind, name))
	}
	commands := []instructions.Command{}
	for i := range metaArgs {
		commands = append(commands, &metaArgs[i])
	}
	for _, stage := range stages {
		commands = append(commands, stage.Commands...)
	}
	for _, command := range commands {
		switch c := command.(type) {
		case *instructions.EnvCommand:
			for _, pair := range c.Env {
				report("ENV", pair.Key, c)
			}
		case *instructions.ArgCommand:
			for _, arg := range c.Args {
				report("ARG", arg.Key, c)
			}
		}
	}
	return findings, nil
}

// contextFiles lists the files (slash paths, relative) a builder would receive.
func contextFiles(contextDir string) ([]string, error) {
	var patterns []string
	if f, err := os.Open(filepath.Join(contextDir, ".dockerignore")); err == nil {
		patterns, err = ignorefile.ReadAll(f)
		f.Close()
		if err != nil {
			return nil, err
		}
	} else if !os.IsNotExist(err) {
		return nil, err
	}
	matcher, err := patternmatcher.New(patterns)
	if err != nil {
		return nil, err
	}
	parents := map[string]patternmatcher.MatchInfo{}
	var files []string
	err = filepath.WalkDir(contextDir, func(p string, entry fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(contextDir, p)
		if err != nil || rel == "." {
			return err
		}
		rel = filepath.ToSlash(rel)
		excluded, info, err := matcher.MatchesUsingParentResults(rel, parents[path.Dir(rel)])
		if err != nil {
			return err
		}
		if entry.IsDir() {
			if excluded && !matcher.Exclusions() {
				return filepath.SkipDir
			}
			parents[rel] = info
			return nil
		}
		if !excluded {
			files = append(files, rel)
		}
		return nil
	})
	sort.Strings(files)
	return files, err
}

// anyFileMatches: the source names a file, a folder holding at least one file, or a pattern
// matching either.
func anyFileMatches(files []string, source string) bool {
	source = strings.TrimPrefix(path.Clean("/"+filepath.ToSlash(source)), "/")
	if source == "" {
		return len(files) > 0
	}
	for _, file := range files {
		for candidate := file; candidate != "."; candidate = path.Dir(candidate) {
			if candidate == source {
				return true
			}
			if ok, _ := path.Match(source, candidate); ok {
				return true
			}
		}
	}
	return false
}
