package main

import (
	"fmt"
	"runtime/debug"

	"github.com/urfave/cli/v2"
)

const version = "0.1.0-dev"

// unknown is what version prints for build facts the binary does not
// carry (a build with -buildvcs=false, or go run).
const unknown = "unknown"

// buildFacts is what `version --json` prints.
type buildFacts struct {
	Version  string `json:"version"`
	Go       string `json:"go"`
	Revision string `json:"revision"`
	// Time is the commit time, Modified whether the tree had changes.
	Time     string `json:"time"`
	Modified bool   `json:"modified"`
}

// readBuildFacts reads the version control settings the go command
// stamps into the binary (vcs.revision, vcs.time, vcs.modified); a field
// the build did not record is "unknown".
func readBuildFacts(info *debug.BuildInfo, ok bool) buildFacts {
	f := buildFacts{Version: version, Go: unknown, Revision: unknown, Time: unknown}
	if !ok || info == nil {
		return f
	}
	if info.GoVersion != "" {
		f.Go = info.GoVersion
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			f.Revision = s.Value
		case "vcs.time":
			f.Time = s.Value
		case "vcs.modified":
			f.Modified = s.Value == "true"
		}
	}
	return f
}

func versionCommand() *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "print the version and build information",
		UsageText: `toolharness version [--json]

The revision and commit time come from the version control stamp of the build (go build in a
git checkout); a build without one (-buildvcs=false, go run) says "unknown".

Example:
   toolharness version --json`,
		Flags: []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print as JSON: version, go, revision, time, modified"}},
		Action: func(c *cli.Context) error {
			f := readBuildFacts(debug.ReadBuildInfo())
			if c.Bool("json") {
				return writeJSONLine(c.App.Writer, f)
			}
			rev := f.Revision
			if f.Modified {
				rev += "+modified"
			}
			_, err := fmt.Fprintf(c.App.Writer, "toolharness %s (%s, revision %s)\n", f.Version, f.Go, rev)
			return err
		},
	}
}
