package main

import (
	"fmt"
	"runtime/debug"

	"github.com/urfave/cli/v2"
)

const version = "0.1.0-dev"

func versionCommand() *cli.Command {
	return &cli.Command{
		Name:      "version",
		Usage:     "print the version and build information",
		UsageText: "toolharness version [--json]\n\nExample:\n   toolharness version --json",
		Flags:     []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print as JSON"}},
		Action: func(c *cli.Context) error {
			goVersion, revision := "unknown", ""
			if info, ok := debug.ReadBuildInfo(); ok {
				goVersion = info.GoVersion
				for _, s := range info.Settings {
					if s.Key == "vcs.revision" {
						revision = s.Value
					}
				}
			}
			if c.Bool("json") {
				return writeJSONLine(c.App.Writer, map[string]string{"version": version, "go": goVersion, "revision": revision})
			}
			fmt.Fprintf(c.App.Writer, "toolharness %s (%s", version, goVersion)
			if revision != "" {
				fmt.Fprintf(c.App.Writer, ", %s", revision)
			}
			fmt.Fprintln(c.App.Writer, ")")
			return nil
		},
	}
}
