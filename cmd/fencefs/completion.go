package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/fencefs/fencefs/cmd/fencefs/internal/config"
	"github.com/fencefs/fencefs/tools"
)

// commands returns fencefs's commands with a line of description each,
// in the order help shows them.
func commands() [][2]string {
	return [][2]string{
		{"serve", "run an MCP server"},
		{"call", "run one tool once"},
		{"tools", "print the configured tools and their schemas"},
		{"skills", "list the skills under the --skills roots"},
		{"overlay", "review an overlay mount: changes, diff, commit, discard"},
		{"audit", "check the hash chain of an audit log"},
		{"checkpoints", "list, show, diff and restore checkpoints"},
		{"version", "print the version"},
		{"help", "print help"},
		{"completion", "print a shell completion script"},
	}
}

// flagCommands returns the commands that take flags.
func flagCommands() []string { return []string{"serve", "call", "tools", "skills", "checkpoints"} }

// verbs returns the commands whose first argument is a verb, and their
// verbs.
func verbs() [][2]string {
	return [][2]string{{"overlay", "changes diff commit discard"}, {"audit", "verify"}}
}

// completion prints the completion script of a shell: fencefs completion
// bash|zsh|fish.
func completion(args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintln(stderr, "fencefs: usage: fencefs completion bash|zsh|fish")
		return exitFatal
	}
	var script string
	switch args[0] {
	case "bash":
		script = bashCompletion()
	case "zsh":
		script = zshCompletion()
	case "fish":
		script = fishCompletion()
	default:
		fmt.Fprintf(stderr, "fencefs: completion: unknown shell %q; use bash, zsh or fish\n", args[0])
		return exitFatal
	}
	io.WriteString(stdout, script)
	return exitOK
}

func commandNames() []string {
	cmds := commands()
	names := make([]string, len(cmds))
	for i, c := range cmds {
		names[i] = c[0]
	}
	return names
}

// helpTopics are what fencefs help takes.
func helpTopics() []string { return append(commandNames(), "paths", "patterns") }

// flagWords returns cmd's flags as "--name" words.
func flagWords(cmd string) string {
	var words []string
	for _, f := range config.Flags(cmd) {
		words = append(words, "--"+f.Name)
	}
	return strings.Join(words, " ")
}

func bashCompletion() string {
	var b strings.Builder
	b.WriteString(`# bash completion for fencefs. Load it with
#   source <(fencefs completion bash)
_fencefs() {
	local cur=${COMP_WORDS[COMP_CWORD]}
	if [[ $COMP_CWORD -eq 1 ]]; then
		COMPREPLY=($(compgen -W "` + strings.Join(commandNames(), " ") + `" -- "$cur"))
		return
	fi
	local words
	case ${COMP_WORDS[1]} in
`)
	for _, c := range flagCommands() {
		fmt.Fprintf(&b, "\t%s) words=%q ;;\n", c, flagWords(c))
	}
	for _, v := range verbs() {
		fmt.Fprintf(&b, "\t%s) [[ $COMP_CWORD -eq 2 ]] || return; words=%q ;;\n", v[0], v[1])
	}
	fmt.Fprintf(&b, "\thelp) words=%q ;;\n", strings.Join(helpTopics(), " "))
	b.WriteString("\tcompletion) words=\"bash zsh fish\" ;;\n\t*) return ;;\n\tesac\n")
	fmt.Fprintf(&b, "\tif [[ ${COMP_WORDS[1]} == call && $cur != -* ]]; then\n\t\twords=%q\n\tfi\n", strings.Join(tools.AllTools(), " "))
	b.WriteString(`	COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -o default -F _fencefs fencefs
`)
	return b.String()
}

func zshCompletion() string {
	var b strings.Builder
	b.WriteString(`#compdef fencefs
# zsh completion for fencefs. Load it with
#   source <(fencefs completion zsh)
# or save it as _fencefs in a directory of $fpath.
_fencefs() {
	if (( CURRENT == 2 )); then
		local -a cmds
		cmds=(
`)
	for _, c := range commands() {
		fmt.Fprintf(&b, "\t\t\t%q\n", c[0]+":"+c[1])
	}
	b.WriteString("\t\t)\n\t\t_describe command cmds\n\t\treturn\n\tfi\n\tcase $words[2] in\n")
	for _, c := range flagCommands() {
		fmt.Fprintf(&b, "\t%s)\n\t\tif [[ $PREFIX == -* ]]; then compadd -- %s", c, flagWords(c))
		if c == "call" {
			fmt.Fprintf(&b, "; else compadd -- %s", strings.Join(tools.AllTools(), " "))
		} else {
			b.WriteString("; else _files")
		}
		b.WriteString("; fi ;;\n")
	}
	for _, v := range verbs() {
		fmt.Fprintf(&b, "\t%s) if (( CURRENT == 3 )); then compadd -- %s; else _files; fi ;;\n", v[0], v[1])
	}
	fmt.Fprintf(&b, "\thelp) compadd -- %s ;;\n", strings.Join(helpTopics(), " "))
	b.WriteString("\tcompletion) compadd -- bash zsh fish ;;\n\tesac\n}\nif [[ $zsh_eval_context[-1] == loadautofunc ]]; then\n\t_fencefs \"$@\"\nelse\n\tcompdef _fencefs fencefs\nfi\n")
	return b.String()
}

func fishCompletion() string {
	var b strings.Builder
	b.WriteString("# fish completion for fencefs. Load it with\n#   fencefs completion fish | source\ncomplete -c fencefs -f\n")
	for _, c := range commands() {
		fmt.Fprintf(&b, "complete -c fencefs -n __fish_use_subcommand -a %s -d %s\n", c[0], fishQuote(c[1]))
	}
	for _, c := range flagCommands() {
		for _, f := range config.Flags(c) {
			req := ""
			if f.Arg != "" {
				req = " -r"
			}
			fmt.Fprintf(&b, "complete -c fencefs -n '__fish_seen_subcommand_from %s' -l %s%s -d %s\n", c, f.Name, req, fishQuote(f.Usage))
		}
	}
	fmt.Fprintf(&b, "complete -c fencefs -n '__fish_seen_subcommand_from call' -a %s\n", fishQuote(strings.Join(tools.AllTools(), " ")))
	for _, v := range verbs() {
		fmt.Fprintf(&b, "complete -c fencefs -n '__fish_seen_subcommand_from %s' -a %s\n", v[0], fishQuote(v[1]))
	}
	fmt.Fprintf(&b, "complete -c fencefs -n '__fish_seen_subcommand_from help' -a %s\n", fishQuote(strings.Join(helpTopics(), " ")))
	b.WriteString("complete -c fencefs -n '__fish_seen_subcommand_from completion' -a 'bash zsh fish'\n")
	return b.String()
}

// fishQuote quotes s for fish, in single quotes.
func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}
