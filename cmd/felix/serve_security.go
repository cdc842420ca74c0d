package main

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/felixbroker/felix/auth"
	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/netio"
	"github.com/felixbroker/felix/units"
)

// fileTables are the tables of the config file that are not settings:
// loadFile leaves them to their readers (loadQuotaFile).
var fileTables = map[string]bool{"quotas": true}

// securityConfig is who may connect and do what, how much each tenant may
// use, and the TLS listener: docs/security.md.
type securityConfig struct {
	authKeys        []string // files of trusted public keys; none: auth off
	tlsAddr         string
	tlsCert, tlsKey string
	quotaDefault    auth.Limits
	quotaTenantSets map[string]quotaLimits // the config file's [quotas.tenants.NAME]: what they leave out is the default's
	// keyFiles resolves the --auth-keys files afresh for a SIGHUP reload
	// (the config file may name others by then); nil: those of startup.
	keyFiles func() ([]string, error)
}

// parseSecurity reads the auth, TLS and default quota settings.
func parseSecurity(st *settings) (securityConfig, error) {
	var c securityConfig
	var errs []error
	c.authKeys = splitKeyFiles(st.get("auth-keys"))
	c.tlsAddr, c.tlsCert, c.tlsKey = st.get("tls-addr"), st.get("tls-cert"), st.get("tls-key")
	if c.tlsAddr != "" && (c.tlsCert == "" || c.tlsKey == "") {
		errs = append(errs, errors.New("--tls-addr needs --tls-cert and --tls-key"))
	}
	var err error
	if c.quotaDefault.PublishBytesPerSec, err = units.ParseBytes(st.get("quota-publish-bytes-per-sec")); err != nil {
		errs = append(errs, fmt.Errorf("--quota-publish-bytes-per-sec: %w", err))
	}
	if c.quotaDefault.Connections, err = strconv.Atoi(st.get("quota-connections")); err != nil {
		errs = append(errs, fmt.Errorf("--quota-connections: %w", err))
	}
	if c.quotaDefault.StoredBytes, err = units.ParseBytes(st.get("quota-stored-bytes")); err != nil {
		errs = append(errs, fmt.Errorf("--quota-stored-bytes: %w", err))
	}
	return c, errors.Join(errs...)
}

// quotaLimits is one [quotas.*] table as written; a field left out is nil.
type quotaLimits struct {
	PublishBytesPerSec *int64 `toml:"publish_bytes_per_sec"`
	Connections        *int   `toml:"connections"`
	StoredBytes        *int64 `toml:"stored_bytes"`
}

// over sets the fields the table gives on top of l.
func (q quotaLimits) over(l auth.Limits) auth.Limits {
	if q.PublishBytesPerSec != nil {
		l.PublishBytesPerSec = *q.PublishBytesPerSec
	}
	if q.Connections != nil {
		l.Connections = *q.Connections
	}
	if q.StoredBytes != nil {
		l.StoredBytes = *q.StoredBytes
	}
	return l
}

// loadQuotaFile reads the config file's quota tables:
//
//	[quotas.default]          # the file's layer of the quota-* settings
//	publish_bytes_per_sec = 10485760
//	[quotas.tenants.acme]     # one tenant; what it leaves out is the default's
//	connections = 50
//
// [quotas.default] fills each quota-* setting no flag, variable or
// top-level key set. It returns the per-tenant tables; a key it does not
// know is an error, as in the rest of the file.
func loadQuotaFile(st *settings, path string) (map[string]quotaLimits, error) {
	if path == "" {
		return nil, nil
	}
	var f struct {
		Quotas struct {
			Default quotaLimits            `toml:"default"`
			Tenants map[string]quotaLimits `toml:"tenants"`
		} `toml:"quotas"`
	}
	md, err := toml.DecodeFile(path, &f)
	if err != nil {
		return nil, fmt.Errorf("config file %s: %w", path, err)
	}
	for _, k := range md.Undecoded() {
		if k[0] == "quotas" {
			return nil, fmt.Errorf("config file %s: unknown key %q", path, k.String())
		}
	}
	d, source := f.Quotas.Default, "file "+path+" [quotas.default]"
	set := func(key, value string) {
		if s := st.byKey[key]; s.source == "default" {
			s.value, s.source = value, source
		}
	}
	if p := d.PublishBytesPerSec; p != nil {
		set("quota-publish-bytes-per-sec", strconv.FormatInt(*p, 10))
	}
	if p := d.Connections; p != nil {
		set("quota-connections", strconv.Itoa(*p))
	}
	if p := d.StoredBytes; p != nil {
		set("quota-stored-bytes", strconv.FormatInt(*p, 10))
	}
	return f.Quotas.Tenants, nil
}

// configure turns the security settings into the server's: the
// Authenticator (or a loud warning that auth is off), the quotas over the
// stored bytes of the engine's streams and of cfg.Caches, and the TLS
// listener.
// configure sets cfg's authenticator, quotas and TLS listener. It returns
// what SIGHUP reloads: the trusted keys (auth on) and the TLS certificate
// (a TLS listener).
func (c securityConfig) configure(cfg *netio.Config, e *engine.Engine, log *slog.Logger) ([]reloader, error) {
	var reloads []reloader
	keys, err := c.configureAuth(cfg, log)
	if err != nil {
		return nil, err
	}
	if keys != nil {
		reloads = append(reloads, keys)
	}
	c.configureQuotas(cfg, e, log)
	if c.tlsAddr == "" {
		return reloads, nil
	}
	cert, err := loadServingCert(c.tlsCert, c.tlsKey, log)
	if err != nil {
		return nil, fmt.Errorf("--tls-cert, --tls-key: %w", err)
	}
	cfg.TLSAddr = c.tlsAddr
	cfg.TLSConfig = &tls.Config{GetCertificate: cert.get, MinVersion: tls.VersionTLS12}
	return append(reloads, cert), nil
}

func (c securityConfig) configureAuth(cfg *netio.Config, log *slog.Logger) (*trustedKeys, error) {
	if len(c.authKeys) == 0 {
		log.Warn("AUTH IS OFF: every client may do anything in every tenant; for local development only. Turn it on with --auth-keys (FELIX_AUTH_KEYS) and issue tokens with felix token issue")
		return nil, nil
	}
	keys, err := auth.LoadPublicKeys(c.authKeys...)
	if err != nil {
		return nil, fmt.Errorf("--auth-keys: %w", err)
	}
	v, err := auth.NewVerifier(keys, nil)
	if err != nil {
		return nil, fmt.Errorf("--auth-keys: %w", err)
	}
	log.Info("auth on: tokens are verified against the trusted keys", "keys", keyIDs(keys))
	cfg.Authenticator = netio.NewTokenAuthenticator(v)
	return &trustedKeys{files: c.authKeys, refresh: c.keyFiles, v: v, log: log}, nil
}

// splitKeyFiles reads the --auth-keys setting: files, comma-separated.
func splitKeyFiles(setting string) []string {
	var files []string
	for _, f := range strings.Split(setting, ",") {
		if f = strings.TrimSpace(f); f != "" {
			files = append(files, f)
		}
	}
	return files
}

func (c securityConfig) configureQuotas(cfg *netio.Config, e *engine.Engine, log *slog.Logger) {
	per := map[string]auth.Limits{}
	names := make([]string, 0, len(c.quotaTenantSets))
	for name, q := range c.quotaTenantSets {
		per[name] = q.over(c.quotaDefault)
		names = append(names, name)
	}
	if c.quotaDefault == (auth.Limits{}) && len(per) == 0 {
		return
	}
	sort.Strings(names)
	d := c.quotaDefault
	log.Info("per-tenant quotas on", slog.Group("default", "publish_bytes_per_sec", d.PublishBytesPerSec,
		"connections", d.Connections, "stored_bytes", d.StoredBytes), "tenants", strings.Join(names, ","))
	if len(c.authKeys) == 0 && (c.quotaDefault.Connections > 0 || anyConnections(per)) {
		log.Warn("connection quotas apply only with auth on: with auth off a connection has no tenant")
	}
	cfg.Quotas = auth.NewQuotas(c.quotaDefault, per, netio.NewStoredBytes(e, 0, nil).Caches(cfg.Caches).Groups(cfg.Groups).Of, nil)
}

func anyConnections(per map[string]auth.Limits) bool {
	for _, l := range per {
		if l.Connections > 0 {
			return true
		}
	}
	return false
}
