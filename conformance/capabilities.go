package conformance

import (
	"testing"

	"github.com/fencefs/fencefs/backend"
)

func (s *suite) capabilityTests() []testCase {
	return []testCase{
		{"Consistent", s.testCapabilitiesConsistent},
	}
}

// testCapabilitiesConsistent checks that the declared capabilities agree
// with the interfaces the backend implements, since the rest of the suite
// trusts them to decide what to test.
func (s *suite) testCapabilitiesConsistent(t *testing.T) {
	e := s.setup(t)
	c := e.caps
	t.Logf("capabilities: %+v", c)
	if c.Name == "" {
		t.Errorf("Capabilities.Name is empty; it names the backend in messages")
	}
	if !c.ReadOnly && !implements[backend.Writer](e.b) {
		t.Errorf("Capabilities.ReadOnly=false but the backend does not implement backend.Writer")
	}
	if c.Symlinks && !implements[backend.SymlinkResolver](e.b) {
		t.Errorf("Capabilities.Symlinks=true but the backend does not implement backend.SymlinkResolver")
	}
	if c.MaxNameBytes < 0 {
		t.Errorf("Capabilities.MaxNameBytes=%d is negative", c.MaxNameBytes)
	}
	if c.Versions && !implements[backend.Stater](e.b) {
		t.Errorf("Capabilities.Versions=true but the backend does not implement backend.Stater, so FileInfo.Version cannot be read")
	}
}
