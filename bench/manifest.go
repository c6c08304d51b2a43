package bench

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/toolharness/toolharness/chat"
)

// ManifestFile is the name of the manifest inside an output directory.
const ManifestFile = "manifest.json"

// Manifest says what produced a directory's results: the command and its
// flags, what was measured and how (the measurement), and the software
// that measured it. A resumed run must have the same measurement
// (Differences).
type Manifest struct {
	Command     string   `json:"command"`
	Created     string   `json:"created,omitempty"`
	Resumed     []string `json:"resumed,omitempty"`
	Toolharness Build    `json:"toolharness"`
	// Flags are the flags given on the command line, as given.
	Flags map[string]string `json:"flags,omitempty"`

	Suite       *SuiteID  `json:"suite,omitempty"`
	Input       *FileID   `json:"input,omitempty"` // bench corpus
	Models      []string  `json:"models,omitempty"`
	Formats     []string  `json:"formats,omitempty"`
	Modes       []string  `json:"modes,omitempty"`
	Repeats     int       `json:"repeats,omitempty"`
	Sampling    *Sampling `json:"sampling,omitempty"`
	MaxRetries  *int      `json:"max_retries,omitempty"`
	Constrained bool      `json:"constrained,omitempty"`
	// ConstrainMaxString is --constrained-max-string (0: unbounded).
	ConstrainMaxString int `json:"constrained_max_string,omitempty"`
	// Whole is --whole: replies asked for whole, TTFT the whole generation.
	Whole   bool   `json:"whole,omitempty"`
	Backend string `json:"backend,omitempty"`
	// Templates are the chat templates by model ("" for the one every
	// model shares).
	Templates map[string]TemplateID `json:"templates,omitempty"`
	Servers   []ServerInfo          `json:"servers,omitempty"`
}

// Build identifies the toolharness binary.
type Build struct {
	Version  string `json:"version"`
	Revision string `json:"revision"`
	Modified bool   `json:"modified,omitempty"`
}

// SuiteID identifies a suite by name, size and content.
type SuiteID struct {
	Name   string `json:"name"`
	Cases  int    `json:"cases"`
	SHA256 string `json:"sha256"`
}

// FileID identifies an input file.
type FileID struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256,omitempty"`
}

// Sampling is what a generation was asked for. Seed is nil for the
// server's default.
type Sampling struct {
	Temperature float64 `json:"temperature"`
	MaxTokens   int     `json:"max_tokens"`
	Seed        *int    `json:"seed,omitempty"`
	NumCtx      int     `json:"num_ctx,omitempty"`
}

// TemplateID is a chat template: where it came from, its family name and
// the hash of its text. An error says why it could not be read (the
// server was down).
type TemplateID struct {
	Source string `json:"source"`
	Family string `json:"family,omitempty"`
	SHA256 string `json:"sha256,omitempty"`
	Error  string `json:"error,omitempty"`
}

// Hash is the hex SHA-256 of data, the hash every manifest field uses.
func Hash(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// NewSuiteID identifies s by its cases and tools as they run.
func NewSuiteID(s Suite) (*SuiteID, error) {
	data, err := chat.Marshal(s.Cases)
	if err != nil {
		return nil, fmt.Errorf("bench: hashing the suite: %w", err)
	}
	return &SuiteID{Name: s.Name, Cases: len(s.Cases), SHA256: Hash(data)}, nil
}

// keys flattens what the results depend on, the keys Differences
// compares: everything but the command (compare and bench run write the
// same results), the flags as typed, the times, and where the servers
// were (endpoints may change between a run and its resume, the software
// they run may not). A value the run could not learn (a server
// that was down) is left out.
func (m *Manifest) keys() map[string]string {
	k := map[string]string{
		"toolharness.version":    m.Toolharness.Version,
		"toolharness.revision":   m.Toolharness.Revision + map[bool]string{true: " (modified)"}[m.Toolharness.Modified],
		"models":                 strings.Join(m.Models, ","),
		"formats":                strings.Join(m.Formats, ","),
		"modes":                  strings.Join(m.Modes, ","),
		"repeats":                strconv.Itoa(m.Repeats),
		"constrained":            strconv.FormatBool(m.Constrained),
		"constrained_max_string": strconv.Itoa(m.ConstrainMaxString),
		"whole":                  strconv.FormatBool(m.Whole),
		"backend":                m.Backend,
	}
	if m.MaxRetries != nil {
		k["max_retries"] = strconv.Itoa(*m.MaxRetries)
	}
	if s := m.Suite; s != nil {
		k["suite.name"], k["suite.cases"], k["suite.sha256"] = s.Name, strconv.Itoa(s.Cases), s.SHA256
	}
	if in := m.Input; in != nil {
		k["input.sha256"] = in.SHA256
	}
	if s := m.Sampling; s != nil {
		k["sampling.temperature"] = strconv.FormatFloat(s.Temperature, 'g', -1, 64)
		k["sampling.max_tokens"] = strconv.Itoa(s.MaxTokens)
		k["sampling.seed"] = "server default"
		if s.Seed != nil {
			k["sampling.seed"] = strconv.Itoa(*s.Seed)
		}
		k["sampling.num_ctx"] = strconv.Itoa(s.NumCtx)
	}
	for model, t := range m.Templates {
		name := "template"
		if model != "" {
			name += "[" + model + "]"
		}
		k[name+".source"] = t.Source
		k[name+".sha256"] = t.SHA256
	}
	versions, digests := map[string]bool{}, map[string]map[string]bool{}
	for _, s := range m.Servers {
		if s.Version != "" {
			versions[s.Software()] = true
		}
		for model, d := range s.Models {
			if digests[model] == nil {
				digests[model] = map[string]bool{}
			}
			digests[model][d] = true
		}
	}
	k["server.version"] = strings.Join(slices.Sorted(maps.Keys(versions)), ",")
	for model, ds := range digests {
		k["model["+model+"]"] = strings.Join(slices.Sorted(maps.Keys(ds)), ",")
	}
	for name, v := range k {
		if v == "" {
			delete(k, name)
		}
	}
	return k
}

// Differences lists the keys whose values differ between two manifests,
// sorted, each as `key: old → new`; a key only one side knows is not a
// difference (a server down during one of the runs).
func Differences(old, new *Manifest) []string {
	a, b := old.keys(), new.keys()
	var out []string
	for _, name := range slices.Sorted(maps.Keys(a)) {
		if v, ok := b[name]; ok && v != a[name] {
			out = append(out, fmt.Sprintf("%s: %s → %s", name, a[name], v))
		}
	}
	return out
}

// ErrManifestDiffers matches the error of a resume whose run is not the
// one in the directory.
var ErrManifestDiffers = errors.New("bench: the run differs from the one in the directory")

// ManifestError names the keys on which a resumed run differs.
type ManifestError struct {
	Path string
	Keys []string
	// Missing is set when the directory has results but no manifest.
	Missing bool
}

func (e *ManifestError) Error() string {
	if e.Missing {
		return fmt.Sprintf("bench: %s has results but no %s (made before runs recorded one): its configuration is unknown; start a new --out", e.Path, ManifestFile)
	}
	return fmt.Sprintf("bench: %s was made with another configuration (%s); resume it with the same flags, or start a new --out", e.Path, strings.Join(e.Keys, "; "))
}

func (e *ManifestError) Is(target error) bool { return target == ErrManifestDiffers }

// ReadManifest reads DIR/manifest.json; a directory without one gives
// nil and no error.
func ReadManifest(dir string) (*Manifest, error) {
	data, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("bench: %s: %w", filepath.Join(dir, ManifestFile), err)
	}
	return &m, nil
}

// WriteManifest writes DIR/manifest.json.
func WriteManifest(dir string, m *Manifest) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	path := filepath.Join(dir, ManifestFile)
	if err := os.WriteFile(path+".tmp", append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	return nil
}

// checkResume refuses a resume into a directory whose results were made
// by another run, and returns the manifest to write: m, keeping the
// first run's creation time and adding this one to Resumed.
func checkResume(dir string, m *Manifest, hasResults bool) (*Manifest, error) {
	old, err := ReadManifest(dir)
	if err != nil {
		return nil, err
	}
	if old == nil {
		if hasResults {
			return nil, &ManifestError{Path: dir, Missing: true}
		}
		return m, nil
	}
	if diff := Differences(old, m); len(diff) > 0 {
		return nil, &ManifestError{Path: dir, Keys: diff}
	}
	out := *m
	out.Resumed = append(slices.Clone(old.Resumed), m.Created)
	out.Created = old.Created
	return &out, nil
}

// Lines is the manifest in a few lines for a terminal or a report
// header: the software, the sampling, the templates.
func (m *Manifest) Lines() []string {
	var lines []string
	build := "toolharness " + m.Toolharness.Version + " (" + shortHash(m.Toolharness.Revision)
	if m.Toolharness.Modified {
		build += ", modified"
	}
	build += ")"
	var servers []string
	for _, s := range m.Servers {
		servers = append(servers, s.Describe())
	}
	if len(servers) > 0 {
		build += "; " + strings.Join(servers, "; ")
	}
	lines = append(lines, build)
	if s := m.Sampling; s != nil {
		seed := "server default"
		if s.Seed != nil {
			seed = strconv.Itoa(*s.Seed)
		}
		line := fmt.Sprintf("temperature %g, max tokens %d, seed %s", s.Temperature, s.MaxTokens, seed)
		if s.NumCtx > 0 {
			line += fmt.Sprintf(", num_ctx %d", s.NumCtx)
		}
		if m.MaxRetries != nil {
			line += fmt.Sprintf(", max retries %d", *m.MaxRetries)
		}
		if m.Constrained {
			line += ", constrained"
		}
		lines = append(lines, line)
	}
	for _, model := range slices.Sorted(maps.Keys(m.Templates)) {
		t := m.Templates[model]
		line := "template "
		if model != "" {
			line += model + ": "
		}
		line += t.Source
		if t.Family != "" && t.Family != t.Source {
			line += " (" + t.Family + ")"
		}
		if t.SHA256 != "" {
			line += ", sha256 " + shortHash(t.SHA256)
		}
		if t.Error != "" {
			line += ", unknown: " + t.Error
		}
		lines = append(lines, line)
	}
	if m.Whole {
		// The latency figures mean something else then: say so wherever
		// they are shown.
		lines = append(lines, "replies asked whole, not streamed (--whole): TTFT is the whole generation")
	}
	if in := m.Input; in != nil {
		lines = append(lines, "input "+in.Path+", sha256 "+shortHash(in.SHA256))
	}
	if s := m.Suite; s != nil {
		lines = append(lines, fmt.Sprintf("suite %s, %d cases, sha256 %s", s.Name, s.Cases, shortHash(s.SHA256)))
	}
	return lines
}

func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
