package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/toolharness/toolharness/chat"
)

// Skill is one .md file of a skills directory: an optional YAML front
// matter (name, description) and a body that may use $ARGUMENTS.
type Skill struct {
	Name        string
	Description string
	Body        string
	Path        string
}

// Skills is a loaded skills directory, sorted by name.
type Skills struct {
	list []Skill
}

// LoadSkills reads every .md file of dir. The name is the front matter's
// name or the file name without .md; the description is the front matter's
// or the body's first non-empty line.
func LoadSkills(dir string) (*Skills, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("agent: skills: %w", err)
	}
	s := &Skills{}
	seen := map[string]string{}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".md") {
			continue
		}
		path := filepath.Join(dir, e.Name())
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("agent: skills: %w", err)
		}
		sk, err := parseSkill(strings.TrimSuffix(e.Name(), ".md"), string(data))
		if err != nil {
			return nil, fmt.Errorf("agent: skill %s: %w", path, err)
		}
		sk.Path = path
		if prev, dup := seen[sk.Name]; dup {
			return nil, fmt.Errorf("agent: skill %q defined twice (%s and %s)", sk.Name, prev, path)
		}
		seen[sk.Name] = path
		s.list = append(s.list, sk)
	}
	sort.Slice(s.list, func(i, j int) bool { return s.list[i].Name < s.list[j].Name })
	return s, nil
}

func parseSkill(name, text string) (Skill, error) {
	sk := Skill{Name: name}
	body := strings.ReplaceAll(text, "\r\n", "\n")
	if rest, ok := strings.CutPrefix(body, "---\n"); ok {
		front, after, found := strings.Cut(rest, "\n---")
		if !found {
			return sk, errors.New("front matter opened with --- but never closed")
		}
		var fm struct {
			Name        string `yaml:"name"`
			Description string `yaml:"description"`
		}
		if err := yaml.Unmarshal([]byte(front), &fm); err != nil {
			return sk, fmt.Errorf("front matter: %w", err)
		}
		if fm.Name != "" {
			sk.Name = fm.Name
		}
		sk.Description = fm.Description
		_, body, _ = strings.Cut(after, "\n")
	}
	sk.Body = strings.TrimSpace(body)
	if sk.Description == "" {
		for _, l := range strings.Split(sk.Body, "\n") {
			if l = strings.TrimSpace(strings.TrimLeft(l, "# ")); l != "" {
				sk.Description = l
				break
			}
		}
	}
	if strings.ContainsAny(sk.Name, " \t\n/") || sk.Name == "" {
		return sk, fmt.Errorf("bad skill name %q (no spaces or slashes)", sk.Name)
	}
	return sk, nil
}

// List returns the skills sorted by name.
func (s *Skills) List() []Skill {
	if s == nil {
		return nil
	}
	return append([]Skill(nil), s.list...)
}

// Get returns the named skill.
func (s *Skills) Get(name string) (Skill, bool) {
	if s == nil {
		return Skill{}, false
	}
	for _, sk := range s.list {
		if sk.Name == name {
			return sk, true
		}
	}
	return Skill{}, false
}

// Expand turns a user message "/name args" into the skill's body with
// $ARGUMENTS replaced by args. ok is false when the message is not a skill
// invocation; a /word that names no skill is an error, so a typo is not
// sent to the model as if it were a request.
func (s *Skills) Expand(msg string) (expanded string, ok bool, err error) {
	t := strings.TrimSpace(msg)
	if !strings.HasPrefix(t, "/") || strings.HasPrefix(t, "//") {
		return msg, false, nil
	}
	name, args, _ := strings.Cut(t[1:], " ")
	if name == "" || strings.Contains(name, "/") {
		return msg, false, nil
	}
	sk, found := s.Get(name)
	if !found {
		return msg, false, fmt.Errorf("agent: no skill named %q (have: %s)", name, strings.Join(s.names(), ", "))
	}
	return expandSkill(sk, strings.TrimSpace(args)), true, nil
}

func expandSkill(sk Skill, args string) string {
	body := sk.Body
	if strings.Contains(body, "$ARGUMENTS") {
		return strings.ReplaceAll(body, "$ARGUMENTS", args)
	}
	if args != "" {
		body += "\n\nARGUMENTS: " + args
	}
	return body
}

func (s *Skills) names() []string {
	var n []string
	for _, sk := range s.List() {
		n = append(n, sk.Name)
	}
	return n
}

// Reminder is the skills list for a system reminder ("" without skills).
func (s *Skills) Reminder() (string, error) {
	if len(s.List()) == 0 {
		return "", nil
	}
	return execPrompt("reminder_skills.tmpl", s.list)
}

// Tool is the skill tool: the model loads a skill's instructions itself.
// The name is an enum of the skills, so a constrained model cannot name
// one that does not exist.
func (s *Skills) Tool() LocalTool {
	names, _ := chat.Marshal(s.names())
	return LocalTool{
		Tool: chat.Tool{
			Name:        "skill",
			Description: "Load the instructions of a skill by name (see the skills list). Returns the skill's text.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","enum":` + string(names) + `,"description":"the skill's name"},"arguments":{"type":"string","description":"text that replaces $ARGUMENTS in the skill"}},"required":["name"]}`),
		},
		Run: func(_ context.Context, args map[string]any) (string, error) {
			name, _ := args["name"].(string)
			sk, ok := s.Get(name)
			if !ok {
				return "", fmt.Errorf("no skill named %q; available: %s", name, strings.Join(s.names(), ", "))
			}
			a, _ := args["arguments"].(string)
			return expandSkill(sk, a), nil
		},
	}
}
