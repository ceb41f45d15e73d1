package tenanttest_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/fencefs/fencefs/tenant"
	"github.com/fencefs/fencefs/tenant/tenanttest"
)

// TestIssuer checks that tenant's JWT verifier accepts what the issuer
// signs and refuses its forgeries.
func TestIssuer(t *testing.T) {
	iss := tenanttest.NewIssuer(t)
	v, err := tenant.NewJWT(t.Context(), tenant.JWTConfig{Issuer: iss.URL, Audience: iss.Audience})
	if err != nil {
		t.Fatal(err)
	}
	id, err := v.Verify(t.Context(), iss.Sign(t, tenanttest.Claims{Subject: "t1"}))
	if err != nil || id.Tenant != "t1" || len(id.Scopes) != 2 {
		t.Fatalf("a signed token: %+v, %v", id, err)
	}
	for name, tok := range map[string]string{
		"alg none":       iss.Unsigned("t1", ""),
		"wrong audience": iss.Sign(t, tenanttest.Claims{Subject: "t1", Audience: "https://other.example"}),
	} {
		if _, err := v.Verify(t.Context(), tok); err == nil {
			t.Errorf("%s: verified", name)
		}
	}
}

func ExampleStart() {
	iss, err := tenanttest.Start()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer iss.Close()
	ctx := context.Background()
	v, err := tenant.NewJWT(ctx, tenant.JWTConfig{Issuer: iss.URL, Audience: iss.Audience})
	if err != nil {
		fmt.Println(err)
		return
	}
	tok, err := iss.Token(tenanttest.Claims{Subject: "t1", Scope: "files:read"})
	if err != nil {
		fmt.Println(err)
		return
	}
	id, err := v.Verify(ctx, tok)
	fmt.Println(id.Tenant, id.Scopes, err)
	// Output: t1 [files:read] <nil>
}

// TestTokenType: with JWTConfig.TokenType, only tokens of that JOSE type
// verify: an ID token of the same issuer and audience is refused.
func TestTokenType(t *testing.T) {
	iss := tenanttest.NewIssuer(t)
	v, err := tenant.NewJWT(t.Context(), tenant.JWTConfig{Issuer: iss.URL, Audience: iss.Audience, TokenType: "at+jwt"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		typ string
		ok  bool
	}{
		{"at+jwt", true},
		{"AT+JWT", true},
		{"application/at+jwt", true},
		{"", false}, // "JWT"
		{"id+jwt", false},
	} {
		_, err := v.Verify(t.Context(), iss.Sign(t, tenanttest.Claims{Subject: "t1", Type: tc.typ}))
		if (err == nil) != tc.ok {
			t.Errorf("typ %q: %v, want accepted %v", tc.typ, err, tc.ok)
		}
	}
	any, err := tenant.NewJWT(t.Context(), tenant.JWTConfig{Issuer: iss.URL, Audience: iss.Audience})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := any.Verify(t.Context(), iss.Sign(t, tenanttest.Claims{Subject: "t1"})); err != nil {
		t.Errorf("without TokenType a JWT-typed token: %v", err)
	}
}
