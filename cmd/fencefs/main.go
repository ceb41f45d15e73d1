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
//	fencefs version                   print the version, module and commit
//	fencefs completion bash|zsh|fish  print a shell completion script
//	fencefs help [TOPIC]              print this help, a command's flags, or paths or patterns
//
// By default the tools work in the current directory (--root DIR to
// choose another). With --mount NAME=SPEC (repeatable) the namespace is
// rooted instead: each mount appears as /NAME, and SPEC is one of
//
//	local:DIR                 a local directory (local:DIR:ro for read-only)
//	s3://BUCKET/PREFIX?endpoint=URL&region=R&path_style=1&ro=1&timeout=D
//	sftp://USER@HOST:PORT/DIR?password_env=VAR&key=FILE&known_hosts=FILE&host_key=KEY&insecure=1&ro=1&timeout=D
//
// S3 credentials come from the AWS SDK's usual chain (environment, shared
// config, instance role). An SFTP password is read from the environment
// variable named by password_env; the host key is checked against
// known_hosts, a pinned host_key ("ssh-ed25519 AAAA..." or its base64
// part), or ~/.ssh/known_hosts when neither is given. timeout= bounds each
// request to the storage and the mount's check at start-up (default
// --storage-timeout, 30s). Mount names are 1 to 64 ASCII letters, digits,
// '-', '_' and '.'. --root and --mount cannot be combined: mount the
// directory instead.
//
// The other flags shape the tools: --cwd, --allow/--deny/--protect
// (repeatable fnmatch patterns), --no-default-protect, --read-only,
// --tools a,b,c (or all), --require-read, --no-hashes, and the limits
// --max-read-lines, --max-read-chars, --max-list, --max-search and
// --max-find. --config FILE reads the same settings from YAML, with the
// flag names as keys (using "_" for "-"), lists for repeatable flags and a
// "mounts" map of name to spec; flags on the command line override the
// file, a --mount replacing the file's mount of the same name and keeping
// the others. Relative paths in the file are taken from its folder. Bad
// settings (an unknown key, a wrong type, a --cwd that is not a directory,
// --read-only with a writing tool) are refused at start-up with a message
// naming them. Every tool call ends by --call-timeout (60s).
//
// --skills ROOT (repeatable, serve and skills only) names a directory of
// agent skills: each subdirectory holding a SKILL.md with name and
// description in its YAML front matter. ROOT is written as a tool path from
// the namespace root (/ws/skills under mounts, skills or an absolute path
// inside --root otherwise); when two roots hold a skill of the same name
// the earlier root wins. serve offers every skill as an MCP prompt whose
// text is the skill's instructions and the path of its files, which the
// model then reads with the file tools, and as SEP-2640 skill://
// resources whose files are read under the policy; the skills are found
// at start-up and again every --skills-refresh (30s), and read afresh
// each time a prompt is got. The skills are found on the storage
// directly, not through --allow, --deny or --protect.
//
// serve --approve changes asks the user, through the host's MCP
// elicitation, before every change, and makes it only when the user
// accepts; a client that cannot ask has its changes refused
// (--approve-fallback refuse, the default) or cancelled (cancel). When
// read_file is offered, the files are also MCP resources
// (fencefs:///{+path}) with path completion and subscriptions.
// skills lists them with the copies they shadow and the problems found,
// and exits 2 when there are problems; without --skills, or when a root
// cannot be used at all, it exits 1.
//
// serve writes nothing but protocol messages to stdout; logs go to stderr
// (--log-level debug|info|warn|error). Over HTTP the endpoint is
// http://ADDR/mcp, and its address is logged at start-up; sessions idle for
// --session-timeout are closed, at most --max-sessions are open, and a
// request must arrive, and each write of an answer go through, within
// --http-timeout.
//
// call prints the tool's result text verbatim and exits 0; for an error the
// model could correct (including malformed JSON and bad arguments) it
// prints the message on stdout and exits 2; for an unknown tool, bad flags
// or settings, a failure of the storage, or SIGINT or SIGTERM, it prints a
// message on stderr and exits 1.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
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
	case "serve", "call", "tools", "skills", "checkpoints":
	case "version", "--version", "-version":
		if len(args) > 0 {
			fmt.Fprintf(stderr, "fencefs: version takes no arguments, got %q\n", args)
			return exitFatal
		}
		fmt.Fprint(stdout, readVersion())
		return exitOK
	case "completion":
		return completion(args, stdout, stderr)
	case "audit":
		return auditCommand(args, stdout, stderr)
	case "overlay":
		return overlayCommand(ctx, args, stdout, stderr)
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
	case "checkpoints":
		return checkpoints(ctx, s, rest, stdout, stderr)
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
  fencefs overlay VERB SPEC [PATH]  review an overlay mount: changes, diff, commit or discard
  fencefs audit verify FILE         check the hash chain of a --audit log (--prev H, --head H, --allow-growth)
  fencefs checkpoints [flags] STORE list|show|diff|restore
                                    the checkpoints a host journaled in STORE (package checkpoint)
  fencefs version                   print the version, module and commit
  fencefs completion bash|zsh|fish  print a shell completion script
  fencefs help [TOPIC]              this help; TOPIC is a command, paths or patterns

Examples:
  fencefs serve --root ~/project
  fencefs serve --mount ws=local:./workspace --mount 'data=s3://bucket/tenant1?region=eu-west-1&ro=1'
  fencefs serve --mount ws=local:./workspace --mount team=local:./team-skills:ro --skills /ws/skills --skills /team
  fencefs call --root ~/project read_file '{"path": "README.md"}'
  fencefs serve --root ~/project --deny '**/.env' --deny '**/.env.*' --deny '*.pem' --deny '*.key'

Mount specs (--mount NAME=SPEC; the namespace is then rooted at /NAME):
  local:DIR                 local directory (local:DIR:ro for read-only)
  s3://BUCKET/PREFIX?endpoint=URL&region=R&path_style=1&ro=1&timeout=D
                            credentials from the AWS SDK's usual chain
  sftp://USER@HOST:PORT/DIR?password_env=VAR&key=FILE&known_hosts=FILE&host_key=KEY&insecure=1&ro=1&timeout=D
                            DIR starting with /~ is relative to the login directory
  NAME is 1 to 64 of A-Z a-z 0-9 - _ . (not . or ..). timeout= bounds each request to the
  storage and the check at start-up (default --storage-timeout, 30s).
  With --config, a --mount adds a mount, or replaces the file's mount of the same name; the
  file's other mounts stay. Relative paths in the file are taken from the file's folder.

Protected paths (default **/.git, **/.env, **/.env.*, *.pem, *.key, **/secrets*) can be READ
but not changed. To keep the model from reading secrets, deny them (see the last example).
`

const pathsText = `Tool paths

Without --mount the tools work in one local directory, --root (default "."). A relative path
starts at --cwd (default: the root); a path starting with / is a host path and must lie inside
the root ("/home/me/project/a.txt" with --root /home/me/project). Tools print paths relative
to --cwd.

With --mount the namespace is rooted: / holds one directory per mount, /NAME/..., and a path
starting with / starts there ("/ws/a.txt"). A relative path starts at --cwd (default "/").
Tools print rooted paths.

--cwd is checked at start-up: it must name a directory of the namespace.
`

const patternsText = `Patterns (--allow, --deny, --protect, and the allow/deny/protect lists of a config file)

A pattern is matched against the path relative to the namespace root, without a leading /:
"src/main.go" in a plain namespace, "ws/src/main.go" for /ws/src/main.go under mounts.
  *        any run of characters, "/" included ("*.pem" matches "a/b/key.pem")
  ?        one character;  [abc] [a-z] [!abc]  one character of (or not of) a class
  **/x     x at any depth, the root included ("**/.env" matches ".env" and "apps/.env")
A denied or protected pattern covers everything below what it matches: --deny private
denies private/notes.md. Patterns are case-sensitive.
Spellings are read as meant: a leading / or ./ is dropped (--deny /ws/private is
ws/private), a trailing / names a directory (--allow src/ allows src/**). A pattern that
cannot match anything is refused at start-up with the spelling to use.

  --deny PATTERN     not readable, not listed, not changeable
  --protect PATTERN  readable, but not changeable (adds to the defaults; --no-default-protect
                     drops them)
  --allow PATTERN    when given, only matching paths can be used

Examples under mounts ws and ref:
  --deny 'ws/private'        one mount's directory        --deny '*/private'  every mount's
  --deny '**/.env'           every .env at any depth      --protect 'ref/**'  all of ref
  --allow 'ws/src/**' --allow 'ws/docs/**'                 only two directories of ws
`

// usage writes the command's overview.
func usage(w io.Writer) {
	fmt.Fprint(w, usageText)
	fmt.Fprintln(w, "\nRun 'fencefs help COMMAND' for a command's flags, 'fencefs help paths' and")
	fmt.Fprintln(w, "'fencefs help patterns' for how paths and patterns are written.")
}

// commandUsage writes the synopsis and flags of cmd.
func commandUsage(cmd string, w io.Writer) {
	synopsis := map[string]string{
		"serve": "fencefs serve [flags]\n\nRuns an MCP server offering the file tools, over stdio or, with --http, streamable HTTP at /mcp.\n" +
			"With --skills ROOT, the skills found there (at start-up, then every --skills-refresh) are offered\n" +
			"as MCP prompts (getting one gives the skill's instructions and the path of its files) and as\n" +
			"skill:// resources (SEP-2640, files read under the policy). ROOT is a tool path from the namespace\n" +
			"root (/NAME/... with mounts); skills are found directly, not through --allow/--deny/--protect.\n" +
			"Skills are offered only with read_file, and not with --tenant-mount (refused at start-up).\n" +
			"With --approve changes, every change is shown to the user through the host and made only on accept;\n" +
			"a client that cannot ask its user has its changes refused (or cancelled: --approve-fallback cancel).\n" +
			"When read_file is offered, files are resources too (fencefs:///{+path}), with subscriptions.\n" +
			"Over HTTP, sessions idle for --session-timeout are closed and at most --max-sessions are open.",
		"call": "fencefs call [flags] TOOL [JSON]\n\nRuns one tool once with JSON arguments (the argument, or stdin when absent).\n" +
			"Exit 0: the result on stdout. Exit 2: an error the model could correct, on stdout.\n" +
			"Exit 1: an unknown tool, bad settings, a fatal error or a signal (SIGINT, SIGTERM), on stderr.\n" +
			"--require-read is serve's: each call is a new process, so no file would count as read.",
		"tools": "fencefs tools [flags]\n\nPrints the configured tools as a JSON array of {name, description, inputSchema, annotations}.",
		"skills": "fencefs skills [flags]\n\nLists the skills under the --skills roots (earlier roots win), the copies they shadow and any\n" +
			"problems (such as a malformed SKILL.md or a missing root), as serve would offer them.\n" +
			"Exit 0: no problems. Exit 2: the listing has problems. Exit 1: without --skills, or a fatal error.",
		"checkpoints": checkpointsUsage,
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
	case "serve", "call", "tools", "skills", "checkpoints":
		commandUsage(args[0], stdout)
	case "overlay":
		fmt.Fprint(stdout, overlayUsage)
	case "audit":
		fmt.Fprint(stdout, auditUsage)
	case "version":
		fmt.Fprint(stdout, "Usage: fencefs version\n\nPrints the version (the module version, or devel and the commit for a build from a clone),\nthe module, the commit with its time and whether it had uncommitted changes, and the Go version.\n")
	case "completion":
		fmt.Fprint(stdout, "Usage: fencefs completion bash|zsh|fish\n\nPrints a completion script for the shell. Load it with\n  source <(fencefs completion bash)     # in ~/.bashrc\n  source <(fencefs completion zsh)      # in ~/.zshrc\n  fencefs completion fish | source      # in ~/.config/fish/config.fish\n")
	case "help":
		usage(stdout)
	case "paths":
		fmt.Fprint(stdout, pathsText)
	case "patterns":
		fmt.Fprint(stdout, patternsText)
	default:
		fmt.Fprintf(stderr, "fencefs: unknown help topic %q; topics: %s\n", args[0], strings.Join(helpTopics(), ", "))
		return exitFatal
	}
	return exitOK
}
