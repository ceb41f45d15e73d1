package policy_test

import (
	"context"
	"fmt"

	"github.com/fencefs/fencefs/policy"
)

func ExampleMatch() {
	fmt.Println(policy.Match("*.py", "src/app/main.py")) // "*" spans "/"
	fmt.Println(policy.Match("**/.env", ".env"))         // "**/" may be dropped
	fmt.Println(policy.Match("**/.git", ".gitignore"))
	fmt.Println(policy.Match("[!a-c]?", "dx"))
	// Output:
	// true
	// true
	// false
	// true
}

func ExampleRules_CheckWrite() {
	rules, err := policy.NewRules(nil, []string{"private"}, policy.DefaultProtectedPatterns())
	if err != nil {
		panic(err)
	}
	fmt.Println(rules.CheckWrite("src/app.go", "src/app.go"))
	fmt.Println(rules.CheckWrite("sub/.git/config", "sub/.git/config"))
	// A link named notes.txt that resolves into a denied directory.
	fmt.Println(rules.CheckWrite("notes.txt", "private/notes.txt"))
	// Protection stops writes only.
	fmt.Println(rules.CheckRead(".env", ".env"))
	// Output:
	// <nil>
	// Path 'sub/.git/config' is protected (matches '**/.git').
	// Path 'notes.txt' is denied by pattern 'private'.
	// <nil>
}

func ExampleScope() {
	scope, err := policy.NewScope("/tenant/sessions/s1")
	if err != nil {
		panic(err)
	}
	fmt.Println(scope.Allows("/tenant/sessions/s1/notes.md"))
	fmt.Println(scope.Allows("/tenant/sessions/s10"))
	fmt.Println(scope.Check(context.Background(), policy.Request{
		Tool: "read_file", Operation: policy.OpRead, Path: "/tenant/sessions/s2/notes.md",
	}))
	// Output:
	// true
	// false
	// Path '/tenant/sessions/s2/notes.md' is outside the allowed scope.
}

func ExampleApproval() {
	approve := func(_ context.Context, req policy.Request) (bool, error) {
		return req.Path != "/prod/config.yaml", nil
	}
	scope, err := policy.NewScope("/prod", "/scratch")
	if err != nil {
		panic(err)
	}
	check := policy.All(scope, policy.Approval([]policy.Operation{policy.OpModify}, approve))
	ctx := context.Background()
	fmt.Println(check.Check(ctx, policy.Request{Tool: "write_file", Operation: policy.OpModify, Path: "/prod/config.yaml"}))
	fmt.Println(check.Check(ctx, policy.Request{Tool: "read_file", Operation: policy.OpRead, Path: "/prod/config.yaml"}))
	fmt.Println(check.Check(ctx, policy.Request{Tool: "write_file", Operation: policy.OpModify, Path: "/home/x"}))
	// Output:
	// Operation 'modify' on '/prod/config.yaml' was not approved.
	// <nil>
	// Path '/home/x' is outside the allowed scope.
}
