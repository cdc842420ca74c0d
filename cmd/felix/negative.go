package main

import (
	"regexp"
	"slices"
	"strings"
)

// kong reads every argument that starts with '-' as a flag, so `felix
// counter add c k -2` met "unknown flag -2" although the help says a
// negative delta subtracts. No flag of felix is a digit: a command line
// refused for a flag that is a negative number is parsed again with `--`
// before it, which makes it (and what follows) positional, as the user
// meant. Only when nothing after it looks like a flag: `-2 --addr x`
// keeps the error (put flags first, or `--` yourself).

// negativeNumber is a negative decimal number.
var negativeNumber = regexp.MustCompile(`^-[0-9]+(\.[0-9]+)?$`)

// negativeAsPositional is args with `--` before the first negative number
// when parseErr refused it as a flag and nothing after it is one; ok false
// otherwise.
func negativeAsPositional(args []string, parseErr error) (retry []string, ok bool) {
	if parseErr == nil || !strings.Contains(parseErr.Error(), "unknown flag -") {
		return nil, false
	}
	for i, a := range args {
		if a == "--" {
			return nil, false
		}
		if !negativeNumber.MatchString(a) {
			continue
		}
		for _, rest := range args[i+1:] {
			if strings.HasPrefix(rest, "-") && !negativeNumber.MatchString(rest) {
				return nil, false
			}
		}
		return slices.Concat(args[:i], []string{"--"}, args[i:]), true
	}
	return nil, false
}
