package mountspec_test

import (
	"fmt"

	"github.com/fencefs/fencefs/mountspec"
)

func ExampleParse() {
	m, err := mountspec.Parse("s3://my-bucket/tenants/t1?region=eu-west-1&ro=1")
	if err != nil {
		panic(err)
	}
	fmt.Println(m.Kind, m.S3.Bucket, m.S3.Prefix, m.S3.Region, m.ReadOnly)

	m, err = mountspec.Parse("sftp://agent@files.example.com:2222/~/work?password_env=SFTP_PASSWORD&known_hosts=/etc/ssh/known_hosts")
	if err != nil {
		panic(err)
	}
	fmt.Println(m.Kind, m.SFTP.User, m.SFTP.Addr(), m.SFTP.Root, m.SFTP.PasswordEnv)

	_, err = mountspec.Parse("sftp://agent:hunter2@files.example.com/srv")
	fmt.Println(err)
	// Output:
	// s3 my-bucket tenants/t1 eu-west-1 true
	// sftp agent files.example.com:2222 work SFTP_PASSWORD
	// sftp: passwords are not accepted in the spec; put the password in an environment variable and add password_env=VAR
}
