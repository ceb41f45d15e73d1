package spec_test

import (
	"fmt"

	"github.com/fencefs/fencefs/mountspec/spec"
)

// A spec is parsed, checked and printed back without opening anything.
func ExampleParse() {
	s, err := spec.Parse("local:./workspace:ro")
	if err != nil {
		panic(err)
	}
	fmt.Println(s.Kind, s.Dir, s.ReadOnly)

	s, err = spec.Parse("s3://my-bucket/tenants/t1/?region=eu-west-1&timeout=5s")
	if err != nil {
		panic(err)
	}
	fmt.Println(s)

	_, err = spec.Parse("ftp://host/dir")
	fmt.Println(err)
	// Output:
	// local ./workspace true
	// s3://my-bucket/tenants/t1?region=eu-west-1&timeout=5s
	// unknown mount spec "ftp://host/dir": use local:DIR, s3://BUCKET/PREFIX or sftp://USER@HOST/DIR
}
