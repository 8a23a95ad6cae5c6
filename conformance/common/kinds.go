package conformance

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kjson "sigs.k8s.io/json"
	kustomize "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/yaml"
	batchv1alpha1 "volcano.sh/apis/pkg/apis/batch/v1alpha1"
)

// header is what every document is first read for: its kind and name.
type header struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name         string `json:"name"`
		GenerateName string `json:"generateName"`
	} `json:"metadata"`
	empty bool // the document holds nothing but comments
}

func peek(text []byte) (h header, err error) {
	j, err := yaml.YAMLToJSON(text)
	if err != nil {
		return h, fmt.Errorf("invalid YAML: %w", err)
	}
	if string(j) == "null" {
		h.empty = true
		return h, nil
	}
	if err := json.Unmarshal(j, &h); err != nil {
		return h, fmt.Errorf("not a Kubernetes object: %w", err)
	}
	return h, nil
}

// The kinds besides Workflow and WorkflowTemplate that may appear, bare or as
// a resource template's manifest. Anything else is an error.
var kinds = map[string]func() any{
	"rbac.authorization.k8s.io/v1 Role":               func() any { return new(rbacv1.Role) },
	"rbac.authorization.k8s.io/v1 RoleBinding":        func() any { return new(rbacv1.RoleBinding) },
	"rbac.authorization.k8s.io/v1 ClusterRole":        func() any { return new(rbacv1.ClusterRole) },
	"rbac.authorization.k8s.io/v1 ClusterRoleBinding": func() any { return new(rbacv1.ClusterRoleBinding) },
	"v1 Namespace":      func() any { return new(corev1.Namespace) },
	"v1 ServiceAccount": func() any { return new(corev1.ServiceAccount) },
	"v1 Secret":         func() any { return new(corev1.Secret) },
	"v1 ConfigMap":      func() any { return new(corev1.ConfigMap) },
	"admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy": func() any {
		return new(admissionv1.ValidatingAdmissionPolicy)
	},
	"admissionregistration.k8s.io/v1 ValidatingAdmissionPolicyBinding": func() any {
		return new(admissionv1.ValidatingAdmissionPolicyBinding)
	},
	"batch.volcano.sh/v1alpha1 Job": func() any { return new(batchv1alpha1.Job) },
}

// checkOther checks a document that is not an Argo Workflow/WorkflowTemplate.
func checkOther(path string, h header, text []byte) error {
	switch h.APIVersion + " " + h.Kind {
	case kustomize.KustomizationVersion + " " + kustomize.KustomizationKind, " " + kustomize.KustomizationKind:
		return checkKustomization(path, text)
	case "batch.volcano.sh/v1alpha1 Job":
		// A bare Job may carry placeholders too; there is no workflow around it.
		text = []byte(scope{}.expand(string(text), false))
	}
	return decodeKnown(h, text)
}

func decodeKnown(h header, text []byte) error {
	newObject, ok := kinds[h.APIVersion+" "+h.Kind]
	if !ok {
		return fmt.Errorf("unsupported kind %q of apiVersion %q", h.Kind, h.APIVersion)
	}
	return DecodeStrict(text, newObject())
}

// DecodeStrict decodes YAML into obj as `kubectl apply` (field validation
// Strict) and the Argo CLI do: duplicate keys, unknown fields and wrong types
// are errors, and field names are case-sensitive (unlike encoding/json).
func DecodeStrict(text []byte, obj any) error {
	j, err := yaml.YAMLToJSONStrict(text)
	if err != nil {
		return err
	}
	strictErrs, err := kjson.UnmarshalStrict(j, obj)
	if err != nil {
		return err
	}
	if len(strictErrs) > 0 {
		return runtime.NewStrictDecodingError(strictErrs)
	}
	return nil
}

func isKustomizationFile(path string) bool {
	switch filepath.Base(path) {
	case "kustomization.yaml", "kustomization.yml", "Kustomization":
		return true
	}
	return false
}

// checkKustomization decodes a kustomization as kustomize does (unknown fields
// are errors) and checks that every file or directory it lists exists.
func checkKustomization(path string, text []byte) error {
	var k kustomize.Kustomization
	if err := k.Unmarshal(text); err != nil {
		return err
	}
	refs := append(append(append([]string{}, k.Resources...), k.Components...), k.Crds...)
	for _, p := range k.Patches {
		if p.Path != "" {
			refs = append(refs, p.Path)
		}
	}
	var errs []error
	for _, ref := range refs {
		if _, err := os.Stat(filepath.Join(filepath.Dir(path), ref)); err != nil {
			errs = append(errs, fmt.Errorf("listed file %q: %w", ref, errors.Unwrap(err)))
		}
	}
	return errors.Join(errs...)
}
