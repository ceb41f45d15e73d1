// Command fencefs gives AI agents safe file tools over local disk, S3,
// SFTP and mounts of them: as an MCP server, or one tool call at a time
// from scripts.
//
// Usage:
//
//	fencefs serve [flags]             run an MCP server (stdio, or streamable HTTP with --http ADDR)
//	fencefs call [flags] TOOL [JSON]  run one tool once; JSON arguments from the argument or stdin
//	fencefs tools [flags]             print the configured tools and their JSON schemas
//	fencefs skills [flags]            list the skills under the --skills roots, and any problems
//	fencefs version                   print the version
//	fencefs help [COMMAND]            print this help or a command's flags
//
// By default the tools work in the current directory (--root DIR to
// choose another). With --mount NAME=SPEC (repeatable) the namespace is
// rooted instead: each mount appears as /NAME, and SPEC is one of
//
//	local:DIR                 a local directory (local:DIR:ro for read-only)
//	s3://BUCKET/PREFIX?endpoint=URL&region=R&path_style=1&ro=1
//	sftp://USER@HOST:PORT/DIR?password_env=VAR&key=FILE&known_hosts=FILE&host_key=KEY&insecure=1&ro=1
//
// S3 credentials come from the AWS SDK's usual chain (environment, shared
// config, instance role). An SFTP password is read from the environment
// variable named by password_env; the host key is checked against
// known_hosts, a pinned host_key ("ssh-ed25519 AAAA..." or its base64
// part), or ~/.ssh/known_hosts when neither is given. --root and --mount
// cannot be combined: mount the directory instead.
//
// The other flags shape the tools: --cwd, --allow/--deny/--protect
// (repeatable fnmatch patterns), --no-default-protect, --read-only,
// --tools a,b,c (or all), --require-read, --no-hashes, and the limits
// --max-read-lines, --max-read-chars, --max-list, --max-search and
// --max-find. --config FILE reads the same settings from YAML, with the
// flag names as keys (using "_" for "-"), lists for repeatable flags and a
// "mounts" map of name to spec; flags on the command line override the
// file. Bad settings are refused at start-up with a message naming them.
//
// --skills ROOT (repeatable, serve and skills only) names a directory of
// agent skills: each subdirectory holding a SKILL.md with name and
// description in its YAML front matter. ROOT is written as a tool path from
// the namespace root (/ws/skills under mounts, skills or an absolute path
// inside --root otherwise); when two roots hold a skill of the same name
// the earlier root wins. serve offers every skill as an MCP prompt whose
// text is the skill's instructions and the path of its files, which the
// model then reads with the file tools; the skills are found once at
// start-up and read afresh each time a prompt is got. The skills are read
// from the storage directly, not through --allow, --deny or --protect.
// skills lists them with the copies they shadow and the problems found,
// and exits 0 even with problems; without --skills, or when a root cannot
// be used at all, it exits 1.
//
// serve writes nothing but protocol messages to stdout; logs go to stderr
// (--log-level debug|info|warn|error). Over HTTP the endpoint is
// http://ADDR/mcp, and its address is logged at start-up.
//
// call prints the tool's result text verbatim and exits 0; for an error the
// model could correct (including malformed JSON and bad arguments) it
// prints the message on stdout and exits 2; for an unknown tool, bad flags
// or settings, or a failure of the storage, it prints a message on stderr
// and exits 1.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/fencefs/fencefs/cmd/fencefs/internal/config"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// The first signal asks the command to stop; a second one ends the
	// process at once, as it would without the handler.
	context.AfterFunc(ctx, stop)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// Exit codes of the command.
const (
	exitOK    = 0
	exitFatal = 1 // bad usage, bad settings, a fatal tool error
	exitRetry = 2 // call: an error the model can correct
)

// run runs the command line args and returns the exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return exitFatal
	}
	cmd, args := args[0], args[1:]
	switch cmd {
	case "serve", "call", "tools", "skills":
	case "version", "--version", "-version":
		fmt.Fprintln(stdout, "fencefs", version())
		return exitOK
	case "help", "-h", "--help", "-help":
		return help(args, stdout, stderr)
	default:
		fmt.Fprintf(stderr, "fencefs: unknown command %q\n\n", cmd)
		usage(stderr)
		return exitFatal
	}
	s, rest, err := config.Parse(cmd, args)
	if errors.Is(err, config.ErrHelp) {
		commandUsage(cmd, stdout)
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "fencefs: %v\n", err)
		return exitFatal
	}
	switch cmd {
	case "serve":
		return serve(ctx, s, rest, stdin, stdout, stderr)
	case "call":
		return call(ctx, s, rest, stdin, stdout, stderr)
	case "skills":
		return listSkills(ctx, s, rest, stdout, stderr)
	default:
		return listTools(ctx, s, rest, stdout, stderr)
	}
}

const usageText = `fencefs gives AI agents safe file tools over local disk, S3, SFTP and mounts.

Usage:
  fencefs serve [flags]             run an MCP server (stdio, or streamable HTTP with --http ADDR)
  fencefs call [flags] TOOL [JSON]  run one tool once (JSON from the argument or stdin)
  fencefs tools [flags]             print the configured tools and their JSON schemas
  fencefs skills [flags]            list the skills under the --skills roots, and any problems
  fencefs version                   print the version
  fencefs help [COMMAND]            print this help, or a command's flags

Examples:
  fencefs serve --root ~/project
  fencefs serve --mount ws=local:./workspace --mount 'data=s3://bucket/tenant1?region=eu-west-1&ro=1'
  fencefs serve --mount ws=local:./workspace --mount team=local:./team-skills:ro --skills /ws/skills --skills /team
  fencefs call read_file '{"path": "README.md"}'

Mount specs (--mount NAME=SPEC; the namespace is then rooted at /NAME):
  local:DIR                 local directory (local:DIR:ro for read-only)
  s3://BUCKET/PREFIX?endpoint=URL&region=R&path_style=1&ro=1
                            credentials from the AWS SDK's usual chain
  sftp://USER@HOST:PORT/DIR?password_env=VAR&key=FILE&known_hosts=FILE&host_key=KEY&insecure=1&ro=1
                            DIR starting with /~ is relative to the login directory
`

// usage writes the command's overview.
func usage(w io.Writer) {
	fmt.Fprint(w, usageText)
	fmt.Fprintln(w, "\nRun 'fencefs help COMMAND' for a command's flags.")
}

// commandUsage writes the synopsis and flags of cmd.
func commandUsage(cmd string, w io.Writer) {
	synopsis := map[string]string{
		"serve": "fencefs serve [flags]\n\nRuns an MCP server offering the file tools, over stdio or, with --http, streamable HTTP at /mcp.\n" +
			"With --skills ROOT, the skills found there at start-up are offered as MCP prompts; getting one\n" +
			"gives the skill's instructions and the path of its files. ROOT is a tool path from the namespace\n" +
			"root (/NAME/... with mounts); skills are read directly, not through --allow/--deny/--protect.",
		"call":  "fencefs call [flags] TOOL [JSON]\n\nRuns one tool once with JSON arguments (the argument, or stdin when absent).\nExit 0: the result on stdout. Exit 2: an error the model could correct, on stdout.\nExit 1: an unknown tool, bad settings or a fatal error, on stderr.",
		"tools": "fencefs tools [flags]\n\nPrints the configured tools as a JSON array of {name, description, inputSchema, annotations}.",
		"skills": "fencefs skills [flags]\n\nLists the skills under the --skills roots (earlier roots win), the copies they shadow and any\n" +
			"problems (such as a malformed SKILL.md), as serve would offer them.\n" +
			"Exit 0 when discovery ran, problems included. Exit 1 without --skills, or on a fatal error.",
	}
	fmt.Fprintf(w, "Usage: %s\n\nFlags:\n", synopsis[cmd])
	config.Usage(cmd, w)
}

// help prints the overview, or the flags of the command named in args.
func help(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stdout)
		return exitOK
	}
	switch args[0] {
	case "serve", "call", "tools", "skills":
		commandUsage(args[0], stdout)
		return exitOK
	}
	fmt.Fprintf(stderr, "fencefs: unknown command %q\n", args[0])
	return exitFatal
}

// version returns the module version the binary was built from, with the
// VCS revision when the build recorded one.
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	v := info.Main.Version
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" && v == "(devel)" {
			v += " " + s.Value
		}
	}
	return v
}
