package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/BurntSushi/toml"
)

// Configuration is layered: a flag wins over a FELIX_* environment variable,
// which wins over the config file, which wins over the default. Every value
// remembers where it came from, so `felix serve --print-config` can say.

// setting is one configuration value.
type setting struct {
	key    string   // the flag name and the config file key
	envs   []string // environment variables, first one canonical
	def    string
	help   string
	value  string
	source string
}

// settings is an ordered set of settings.
type settings struct {
	list  []*setting
	byKey map[string]*setting
}

func newSettings(defs []setting) *settings {
	s := &settings{byKey: map[string]*setting{}}
	for i := range defs {
		d := defs[i]
		d.value, d.source = d.def, "default"
		s.list = append(s.list, &d)
		s.byKey[d.key] = &d
	}
	return s
}

// resolve applies the config file (when path is set), the environment and
// the flags the user gave (flags maps key -> value for flags set).
func (s *settings) resolve(path string, env func(string) (string, bool), flags map[string]string) error {
	if path != "" {
		if err := s.loadFile(path); err != nil {
			return err
		}
	}
	for _, st := range s.list {
		for _, name := range st.envs {
			if v, ok := env(name); ok {
				st.value, st.source = v, "env "+name
				break
			}
		}
	}
	for key, v := range flags {
		st, ok := s.byKey[key]
		if !ok {
			return fmt.Errorf("unknown setting %q", key)
		}
		st.value, st.source = v, "flag --"+key
	}
	return nil
}

// loadFile reads a TOML file of key = value pairs, refusing unknown keys so
// a typo is an error rather than a silently ignored setting.
func (s *settings) loadFile(path string) error {
	var raw map[string]any
	if _, err := toml.DecodeFile(path, &raw); err != nil {
		return fmt.Errorf("config file %s: %w", path, err)
	}
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if fileTables[k] {
			continue // read by its owner, not a setting
		}
		st, ok := s.byKey[k]
		if !ok {
			return fmt.Errorf("config file %s: unknown key %q%s", path, k, didYouMean(k, s.keys()))
		}
		st.value, st.source = fmt.Sprint(raw[k]), "file "+path
	}
	return nil
}

// keys are the settings' keys, in order.
func (s *settings) keys() []string {
	out := make([]string, len(s.list))
	for i, st := range s.list {
		out[i] = st.key
	}
	return out
}

func (s *settings) get(key string) string {
	st, ok := s.byKey[key]
	if !ok {
		panic("felix: no setting " + key)
	}
	return st.value
}

// print writes every setting with its value and source.
func (s *settings) print(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SETTING\tVALUE\tFROM\tENV")
	for _, st := range s.list {
		v := st.value
		if v == "" {
			v = `""`
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", st.key, v, st.source, strings.Join(st.envs, ","))
	}
	tw.Flush()
}

func osEnv(name string) (string, bool) { return os.LookupEnv(name) }
