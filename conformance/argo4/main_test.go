package main

import (
	"testing"

	conformance "hera-volcano/conformance/common"
)

func TestValidate(t *testing.T) {
	if err := conformance.SelfTest(newArgo(), t.TempDir()); err != nil {
		t.Error(err)
	}
}
