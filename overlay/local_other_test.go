//go:build !linux

package overlay_test

// localKinds are empty where local disk has no backend.
var localKinds []layerKind
