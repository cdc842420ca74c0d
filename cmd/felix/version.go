package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// version and commit are set at build time with -ldflags "-X
// main.version=... -X main.commit=..." (make build stamps `git describe`
// and the commit); a plain go build leaves "dev", and the commit its VCS
// stamp records, if any.
var (
	version = "dev"
	commit  = ""
)

// versionCmd prints what this binary is.
type versionCmd struct{}

func (versionCmd) Run() error {
	info, _ := debug.ReadBuildInfo()
	fmt.Println(versionLine(version, commit, info))
	return nil
}

// versionLine is "felix VERSION (commit C[, modified], GO, OS/ARCH)": the
// commit stamped, else the build's VCS stamp's (go build records it in a
// git checkout unless -buildvcs=false), else "unknown".
func versionLine(version, stamped string, info *debug.BuildInfo) string {
	commit, modified := "unknown", false
	goVersion := runtime.Version()
	if info != nil {
		goVersion = info.GoVersion
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value[:min(len(s.Value), 12)]
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	if stamped != "" {
		commit, modified = stamped, false
	}
	if modified {
		commit += ", modified"
	}
	return fmt.Sprintf("felix %s (commit %s, %s, %s/%s)", version, commit, goVersion, runtime.GOOS, runtime.GOARCH)
}
