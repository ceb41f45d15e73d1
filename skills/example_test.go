package skills_test

import (
	"context"
	"fmt"

	"github.com/spf13/afero"

	"github.com/fencefs/fencefs/aferoadapter"
	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/mounted"
	"github.com/fencefs/fencefs/skills"
)

func ExampleLoader() {
	ctx := context.Background()
	tenant := aferoadapter.New(afero.NewMemMapFs())
	workspace := aferoadapter.New(afero.NewMemMapFs())
	write := func(b backend.Backend, name, data string) {
		if err := backend.WriteFile(ctx, b, name, []byte(data), backend.WriteOptions{}); err != nil {
			panic(err)
		}
	}
	write(tenant, "skills/pdf-forms/SKILL.md", "---\nname: pdf-forms\ndescription: Fill in PDF forms.\n---\nRead fields.md, then fill in each field.\n")
	write(tenant, "skills/pdf-forms/fields.md", "# Fields\n")
	write(workspace, "skills/pdf-forms/SKILL.md", "---\nname: pdf-forms\ndescription: An older copy.\n---\n")
	write(workspace, "skills/release/SKILL.md", "---\nname: release\n---\n")

	ns, err := mounted.New(map[string]backend.Backend{"tenant": tenant, "workspace": workspace})
	if err != nil {
		panic(err)
	}
	loader, err := skills.New(ns, []string{"/tenant/skills", "/workspace/skills"}, skills.Options{})
	if err != nil {
		panic(err)
	}
	cat, err := loader.Discover(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Print(skills.Format(cat))

	a, err := loader.Activate(ctx, "pdf-forms")
	if err != nil {
		panic(err)
	}
	fmt.Println()
	fmt.Println(a.Instructions)
	fmt.Println(a.ReadPath)
	// Output:
	// NAME       PATH                      DESCRIPTION
	// pdf-forms  /tenant/skills/pdf-forms  Fill in PDF forms.
	//
	// Shadowed by an earlier root:
	//   pdf-forms  /workspace/skills/pdf-forms  (in use: /tenant/skills/pdf-forms)
	//
	// Problems:
	//   /workspace/skills/release/SKILL.md: description is missing
	//
	// Read fields.md, then fill in each field.
	// /tenant/skills/pdf-forms
}

func ExampleParseManifest() {
	m, err := skills.ParseManifest([]byte("---\nname: commit-msg\ndescription: Write commit messages.\nlicense: MIT\n---\n\nUse the imperative mood.\n"))
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s: %s (license %v)\n%s\n", m.Name, m.Description, m.Fields["license"], m.Body)

	_, err = skills.ParseManifest([]byte("---\nname: commit-msg\ndescription: 42\n---\n"))
	fmt.Println(err)
	// Output:
	// commit-msg: Write commit messages. (license MIT)
	// Use the imperative mood.
	// line 3: description must be a string, not an integer
}

func ExamplePromptText() {
	a := skills.Activation{
		Skill:        skills.Skill{Name: "pdf-forms"},
		Instructions: "Read fields.md, then fill in each field.",
		ReadPath:     "/tenant/skills/pdf-forms",
	}
	fmt.Print(skills.PromptText(a))
	// Output:
	// Read fields.md, then fill in each field.
	//
	// The files of the skill "pdf-forms" are in the directory /tenant/skills/pdf-forms. Paths in these instructions are relative to it: read them with the file tools as /tenant/skills/pdf-forms/<path>.
}
