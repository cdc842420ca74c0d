package engine

import (
	"fmt"
	"path/filepath"
)

// NameBytesMax bounds a tenant, namespace, stream or cache name.
const NameBytesMax = 255

// StreamID names a stream: (tenant, namespace, name).
type StreamID struct {
	Tenant    string `json:"tenant"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

func (id StreamID) String() string { return id.Tenant + "/" + id.Namespace + "/" + id.Name }

// Check validates each part with CheckName.
func (id StreamID) Check() error {
	for _, p := range [][2]string{{"tenant", id.Tenant}, {"namespace", id.Namespace}, {"name", id.Name}} {
		if err := CheckName(p[0], p[1]); err != nil {
			return err
		}
	}
	return nil
}

// CheckName accepts 1 to NameBytesMax bytes of [A-Za-z0-9._-], not "." or
// "..": names become directory names, so nothing else is allowed.
func CheckName(what, name string) error {
	if name == "" || len(name) > NameBytesMax || name == "." || name == ".." {
		return fmt.Errorf("%w: %s %q must be 1 to %d characters other than \".\" and \"..\"", ErrInvalidName, what, name, NameBytesMax)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
		if !ok {
			return fmt.Errorf("%w: %s %q has %q; use letters, digits, '.', '_' and '-'", ErrInvalidName, what, name, c)
		}
	}
	return nil
}

// streamDir is where a stream's shards live under the data directory.
func streamDir(root string, id StreamID) string {
	return filepath.Join(root, "streams", id.Tenant, id.Namespace, id.Name)
}

func shardDir(root string, id StreamID, shard int) string {
	return filepath.Join(streamDir(root, id), fmt.Sprintf("shard-%04d", shard))
}
