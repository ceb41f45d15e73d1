package config_test

import (
	"fmt"

	"github.com/fencefs/fencefs/cmd/fencefs/internal/config"
)

func ExampleParse() {
	s, rest, err := config.Parse("call", []string{"--mount", "ws=local:./workspace", "--mount", "ref=local:./docs:ro", "--max-read-lines", "200", "read_file", `{"path":"/ws/a.txt"}`})
	if err != nil {
		panic(err)
	}
	for _, m := range s.Mounts {
		fmt.Println(m.Name, m.Spec)
	}
	fmt.Println(s.MaxReadLines, rest)

	_, _, err = config.Parse("serve", []string{"--max-list", "0"})
	fmt.Println(err)
	// Output:
	// ref local:./docs:ro
	// ws local:./workspace
	// 200 [read_file {"path":"/ws/a.txt"}]
	// --max-list: must be > 0, got 0
}

func ExampleParse_skills() {
	s, _, err := config.Parse("serve", []string{"--mount", "ws=local:./workspace", "--mount", "team=local:./team-skills:ro", "--skills", "/team", "--skills", "/ws/skills"})
	if err != nil {
		panic(err)
	}
	fmt.Println(s.Skills)

	_, _, err = config.Parse("call", []string{"--skills", "/team"})
	fmt.Println(err)
	// Output:
	// [/team /ws/skills]
	// --skills: unknown flag (see fencefs help call)
}
