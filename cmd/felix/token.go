package main

import (
	"crypto/ed25519"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/felixbroker/felix/auth"
	"github.com/felixbroker/felix/units"
)

type tokenCmd struct {
	Keygen tokenKeygenCmd `cmd:"" help:"Make a signing key pair: the private key signs tokens, the public key goes in the broker's --auth-keys."`
	Issue  tokenIssueCmd  `cmd:"" help:"Sign a token for a tenant with permissions and a lifetime."`
}

type tokenKeygenCmd struct {
	Out string `help:"Directory to write felix-signing.key (private, 0600) and felix-signing.pub into." default:"." type:"existingdir"`
}

type tokenIssueCmd struct {
	Key    string         `help:"Private key file (from felix token keygen)." required:"" type:"existingfile"`
	Tenant string         `help:"The tenant the token is scoped to." required:""`
	Sub    string         `help:"Who the token is for (subject)." default:"felix-client"`
	Perm   []string       `help:"A permission, action:resource (repeatable): publish, subscribe, cache.read, cache.write, counter, group, admin or *, on namespace/name with * wildcards." required:""`
	TTL    units.Duration `name:"ttl" help:"Lifetime of the token, e.g. 24h, 30d." default:"24h"`
}

func (c *tokenKeygenCmd) Run() error {
	priv, err := auth.GenerateKey()
	if err != nil {
		return err
	}
	privPEM, err := auth.EncodePrivateKey(priv)
	if err != nil {
		return err
	}
	pub := priv.Public().(ed25519.PublicKey)
	pubPEM, err := auth.EncodePublicKey(pub)
	if err != nil {
		return err
	}
	privPath, pubPath := filepath.Join(c.Out, "felix-signing.key"), filepath.Join(c.Out, "felix-signing.pub")
	if err := writeNew(privPath, privPEM, 0o600); err != nil {
		return err
	}
	if err := writeNew(pubPath, pubPEM, 0o644); err != nil {
		return err
	}
	fmt.Printf("key id %s\nprivate key: %s (keep it secret)\npublic key:  %s (give it to brokers: felix serve --auth-keys %s)\n",
		auth.KeyID(pub), privPath, pubPath, pubPath)
	return nil
}

// writeNew refuses to overwrite an existing key.
func writeNew(path string, b []byte, mode os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func (c *tokenIssueCmd) Run() error {
	b, err := os.ReadFile(c.Key)
	if err != nil {
		return err
	}
	priv, err := auth.ParsePrivateKey(b)
	if err != nil {
		return err
	}
	if c.TTL <= 0 {
		return fmt.Errorf("--ttl %s: a token must live a while (it would have expired already)", c.TTL)
	}
	tok, err := auth.Issue(priv, c.Tenant, c.Sub, c.Perm, time.Duration(c.TTL), time.Now())
	if err != nil {
		return err
	}
	fmt.Println(tok)
	return nil
}
