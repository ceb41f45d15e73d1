package policy

import (
	"context"
	"errors"
	"reflect"
	"testing"
)

func TestApproval(t *testing.T) {
	errBroken := errors.New("approver unreachable")
	tests := []struct {
		name       string
		ops        []Operation
		approve    Approver
		req        Request
		want       string // expected *Denied message, "" for nil
		wantErr    error  // expected non-Denied error
		wantAsked  bool
		nilApprove bool
	}{
		{
			name: "operation not listed", ops: []Operation{OpModify},
			req: Request{Tool: "read_file", Operation: OpRead, Path: "a"},
		},
		{
			name: "approved", ops: []Operation{OpModify},
			req:       Request{Tool: "write_file", Operation: OpModify, Path: "a"},
			wantAsked: true,
		},
		{
			name: "refused", ops: []Operation{OpRead, OpModify},
			req:       Request{Tool: "edit_file", Operation: OpModify, Path: "/t/notes.md"},
			want:      "Operation 'modify' on '/t/notes.md' was not approved.",
			wantAsked: true,
		},
		{
			name: "approver error is returned unchanged", ops: []Operation{OpSearch},
			req:       Request{Tool: "grep", Operation: OpSearch, Path: "."},
			wantErr:   errBroken,
			wantAsked: true,
		},
		{
			name: "nil approver fails closed", ops: []Operation{OpRead}, nilApprove: true,
			req:  Request{Tool: "read_file", Operation: OpRead, Path: "x"},
			want: "Operation 'read' on 'x' was not approved.",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			asked := false
			var approve Approver
			if !tt.nilApprove {
				approve = func(_ context.Context, req Request) (bool, error) {
					asked = true
					if !reflect.DeepEqual(req, tt.req) {
						t.Errorf("approver got %+v, want %+v", req, tt.req)
					}
					if tt.wantErr != nil {
						return true, tt.wantErr
					}
					return tt.want == "", nil
				}
			}
			err := Approval(tt.ops, approve).Check(context.Background(), tt.req)
			if asked != tt.wantAsked {
				t.Errorf("approver asked = %v, want %v", asked, tt.wantAsked)
			}
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("got %v, want %v", err, tt.wantErr)
				}
				return
			}
			assertDenied(t, err, tt.want)
		})
	}
}

func TestApprovalCopiesOps(t *testing.T) {
	ops := []Operation{OpModify}
	c := Approval(ops, func(context.Context, Request) (bool, error) { return false, nil })
	ops[0] = OpRead
	if err := c.Check(context.Background(), Request{Operation: OpModify, Path: "a"}); err == nil {
		t.Error("Approval kept the caller's slice instead of a copy")
	}
}

func TestAll(t *testing.T) {
	var calls []string
	record := func(name string, err error) Checker {
		return CheckerFunc(func(context.Context, Request) error {
			calls = append(calls, name)
			return err
		})
	}
	deny := &Denied{Message: "no"}
	tests := []struct {
		name      string
		checkers  []Checker
		wantErr   error
		wantCalls []string
	}{
		{name: "none", wantCalls: nil},
		{name: "all pass", checkers: []Checker{record("a", nil), nil, record("b", nil)}, wantCalls: []string{"a", "b"}},
		{name: "stops at first error", checkers: []Checker{record("a", nil), record("b", deny), record("c", nil)},
			wantErr: deny, wantCalls: []string{"a", "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls = nil
			err := All(tt.checkers...).Check(context.Background(), Request{Operation: OpRead, Path: "."})
			if err != tt.wantErr {
				t.Errorf("got %v, want %v", err, tt.wantErr)
			}
			if len(calls) != len(tt.wantCalls) {
				t.Fatalf("calls %q, want %q", calls, tt.wantCalls)
			}
			for i := range calls {
				if calls[i] != tt.wantCalls[i] {
					t.Fatalf("calls %q, want %q", calls, tt.wantCalls)
				}
			}
		})
	}
}
