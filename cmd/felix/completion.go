package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/alecthomas/kong"
)

// Shell completion: `felix completion bash|zsh|fish` prints a script that
// asks the binary itself (`felix __complete -- WORDS...`) for the
// candidates of the word under the cursor, from the command line's own
// model: the commands and flags always match the binary that answers.

type completionCmd struct {
	Shell string `arg:"" enum:"bash,zsh,fish" help:"bash, zsh or fish."`
}

// The scripts. Each passes the words after "felix" up to the cursor's
// (the last one possibly empty), after "--" so that none is read as a
// flag of __complete.
var completionScripts = map[string]string{
	"bash": `# felix completion for bash: source <(felix completion bash)
_felix() {
	local IFS=$'\n'
	COMPREPLY=($(felix __complete -- "${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null))
}
complete -o default -F _felix felix
`,
	"zsh": `#compdef felix
# felix completion for zsh: source <(felix completion zsh)
_felix() {
	local -a candidates
	candidates=("${(@f)$(felix __complete -- "${(@)words[2,CURRENT]}" 2>/dev/null)}")
	compadd -a candidates
}
compdef _felix felix
`,
	"fish": `# felix completion for fish: felix completion fish | source
complete -c felix -f -a '(felix __complete -- (commandline -opc)[2..-1] (commandline -ct) 2>/dev/null)'
`,
}

func (c *completionCmd) Run() error {
	fmt.Print(completionScripts[c.Shell])
	return nil
}

// completeCmd answers the scripts: one candidate a line.
type completeCmd struct {
	Words []string `arg:"" optional:"" help:"The words after felix, the last the one being completed."`
}

func (c *completeCmd) Run() error {
	var root cli
	parser, err := newParser(&root)
	if err != nil {
		return err
	}
	for _, s := range complete(parser.Model.Node, c.Words) {
		fmt.Println(s)
	}
	return nil
}

// complete is the candidates for the last of words: the subcommands and
// flags of the command the words before it reached, that start with it.
func complete(root *kong.Node, words []string) []string {
	if len(words) == 0 {
		words = []string{""}
	}
	n := root
	for _, w := range words[:len(words)-1] {
		if strings.HasPrefix(w, "-") {
			continue // a flag (its value, if separate, matches no command)
		}
		for _, child := range n.Children {
			if child.Type == kong.CommandNode && !child.Hidden && child.Name == w {
				n = child
				break
			}
		}
	}
	prefix := words[len(words)-1]
	var out []string
	if !strings.HasPrefix(prefix, "-") {
		for _, child := range n.Children {
			if child.Type == kong.CommandNode && !child.Hidden && strings.HasPrefix(child.Name, prefix) {
				out = append(out, child.Name)
			}
		}
	}
	if strings.HasPrefix(prefix, "-") || len(out) == 0 {
		for _, group := range n.AllFlags(true) {
			for _, f := range group {
				if name := "--" + f.Name; strings.HasPrefix(name, prefix) {
					out = append(out, name)
				}
			}
		}
	}
	sort.Strings(out)
	return out
}
