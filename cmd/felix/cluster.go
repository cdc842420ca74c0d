package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/felixbroker/felix/broker"
)

type clusterCmd struct {
	Status clusterStatusCmd `cmd:"" help:"Show the cluster as one broker sees it: its brokers, where each shard is and who leads it (the admin server's /cluster)."`
}

// adminFlags reach a broker's admin server, which serves /metrics,
// /readyz and /cluster over plain HTTP (no token: it belongs on a private
// address, docs/security.md).
type adminFlags struct {
	Admin   string        `name:"admin-addr" aliases:"admin" help:"The broker's admin address, as its felix serve --admin-addr (--admin for short)." default:"127.0.0.1:7118" env:"FELIX_ADMIN_ADDR" placeholder:"HOST:PORT"`
	Timeout time.Duration `help:"How long to wait for the broker to answer." default:"10s"`
}

type clusterStatusCmd struct {
	adminFlags
	JSON bool `name:"json" help:"Print /cluster's JSON as the broker sent it (docs/cluster.md describes it)."`
}

func (c *clusterStatusCmd) Run() error {
	body, err := c.get("/cluster")
	if err != nil {
		return err
	}
	if c.JSON {
		_, err := os.Stdout.Write(body)
		return err
	}
	var st broker.ClusterStatusJSON
	if err := json.Unmarshal(body, &st); err != nil {
		return fmt.Errorf("the admin server at %s answered /cluster with what is not its JSON: %w", c.Admin, err)
	}
	if st.Version != broker.ClusterStatusVersion {
		return fmt.Errorf("the broker at %s describes its cluster in version %d; this felix reads version %d (--json prints it as is)",
			c.Admin, st.Version, broker.ClusterStatusVersion)
	}
	return printClusterStatus(os.Stdout, st)
}

// get fetches path from the admin server, and says what went wrong in
// the words of someone at a terminal: which address it could not reach,
// or what the broker said.
func (a *adminFlags) get(path string) ([]byte, error) {
	base := strings.TrimSuffix(a.Admin, "/")
	if !strings.Contains(base, "://") {
		base = "http://" + base
	}
	resp, err := (&http.Client{Timeout: a.Timeout}).Get(base + path)
	if err != nil {
		return nil, fmt.Errorf("cannot reach the broker's admin server at %s: %w (is a broker running there? name its admin address, felix serve's --admin-addr, with --admin)",
			a.Admin, unwrapURLError(err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("reading %s from %s: %w", path, a.Admin, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, adminError(a.Admin, path, resp.StatusCode, body)
	}
	return body, nil
}

// adminError is a refusal from the admin server: the broker's own words
// when it gave them as JSON (a broker alone, a broker starting), else the
// status (an admin server without the path: a felix older than this one).
func adminError(addr, path string, code int, body []byte) error {
	var e broker.ClusterErrorJSON
	if json.Unmarshal(body, &e) == nil && e.Error != "" {
		return fmt.Errorf("the broker at %s: %s", addr, e.Error)
	}
	if code == http.StatusNotFound {
		return fmt.Errorf("the admin server at %s has no %s (a broker older than this felix?)", addr, path)
	}
	return fmt.Errorf("the admin server at %s answered %s with %s: %s", addr, path, http.StatusText(code), strings.TrimSpace(string(body)))
}

// unwrapURLError drops the "Get http://...:" that net/http puts before
// the cause: the message names the address already.
func unwrapURLError(err error) error {
	if u, ok := errors.AsType[*url.Error](err); ok {
		return u.Err
	}
	return err
}
