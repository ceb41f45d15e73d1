package skills

import (
	"strings"
	"testing"
)

func TestFormat(t *testing.T) {
	tests := []struct {
		name string
		cat  *Catalog
		want string
	}{
		{
			name: "empty",
			cat:  &Catalog{Roots: []string{"/tenant/skills", "/workspace/skills"}},
			want: "No skills found in /tenant/skills, /workspace/skills.\n",
		},
		{
			name: "skills, shadowed copies and problems",
			cat: &Catalog{
				Roots: []string{"/t", "/w"},
				Skills: []Skill{
					{Name: "commit-msg", Path: "/t/commit-msg", Description: "Write commit\n  messages."},
					{Name: "pdf-forms", Path: "/w/pdf-forms", Description: strings.Repeat("word ", 30)},
				},
				Shadowed: []Shadowed{{Skill: Skill{Name: "commit-msg", Path: "/w/commit-msg"}, By: Skill{Path: "/t/commit-msg"}}},
				Problems: []Problem{
					{Path: "/w/bad/SKILL.md", Reason: "description is missing"},
					{Path: "/w/evil\nproblem: forged", Reason: "directory name is not valid"},
				},
			},
			want: "NAME        PATH           DESCRIPTION\n" +
				"commit-msg  /t/commit-msg  Write commit messages.\n" +
				"pdf-forms   /w/pdf-forms   " + strings.Repeat("word ", 14) + "word...\n" +
				"\nShadowed by an earlier root:\n" +
				"  commit-msg  /w/commit-msg  (in use: /t/commit-msg)\n" +
				"\nProblems:\n" +
				"  /w/bad/SKILL.md: description is missing\n" +
				"  \"/w/evil\\nproblem: forged\": directory name is not valid\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Format(tt.cat); got != tt.want {
				t.Errorf("Format =\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}
