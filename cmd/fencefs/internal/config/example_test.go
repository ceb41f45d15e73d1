package config_test

import (
	"fmt"

	"github.com/fencefs/fencefs/cmd/fencefs/internal/config"
)

func ExampleParseMountSpec() {
	m, err := config.ParseMountSpec("s3://my-bucket/tenants/t1?region=eu-west-1&ro=1")
	if err != nil {
		panic(err)
	}
	fmt.Println(m.Kind, m.S3.Bucket, m.S3.Prefix, m.S3.Region, m.ReadOnly)

	m, err = config.ParseMountSpec("sftp://agent@files.example.com:2222/~/work?password_env=SFTP_PASSWORD&known_hosts=/etc/ssh/known_hosts")
	if err != nil {
		panic(err)
	}
	fmt.Println(m.Kind, m.SFTP.User, m.SFTP.Addr(), m.SFTP.Root, m.SFTP.PasswordEnv)

	_, err = config.ParseMountSpec("sftp://agent:hunter2@files.example.com/srv")
	fmt.Println(err)
	// Output:
	// s3 my-bucket tenants/t1 eu-west-1 true
	// sftp agent files.example.com:2222 work SFTP_PASSWORD
	// sftp: passwords are not accepted in the spec; put the password in an environment variable and add password_env=VAR
}

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
