// Command argo37-validate checks rendered Argo Workflows and WorkflowTemplates
// with the validator of Argo Workflows v3.7, as `argo submit` and
// `argo template create` run it. See ../README.md.
package main

import (
	"fmt"
	"io"

	log "github.com/sirupsen/logrus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"github.com/argoproj/argo-workflows/v3/workflow/common"
	"github.com/argoproj/argo-workflows/v3/workflow/validate"

	conformance "hera-volcano/conformance/common"
)

type argo struct{}

func (argo) Version() string {
	return "argo " + conformance.ModuleVersion("github.com/argoproj/argo-workflows/v3")
}

func (argo) Parse(doc []byte) (any, error) {
	// strict=true is the CLI's default (--strict).
	res := common.ParseObjects(doc, true)
	if len(res) != 1 {
		return nil, fmt.Errorf("argo parsed %d objects from one document", len(res))
	}
	return res[0].Object, res[0].Err
}

func (argo) Validate(obj any, templates []any) error {
	getter := templateGetter(templates)
	// The zero ValidateOpts and nil workflow defaults are what the API server
	// (in-process for a kube-client CLI) passes on CreateWorkflow and
	// CreateWorkflowTemplate; ValidateWorkflowTemplate sets its own flags.
	switch o := obj.(type) {
	case *wfv1.Workflow:
		return validate.ValidateWorkflow(getter, clusterGetter{}, o, nil, validate.ValidateOpts{})
	case *wfv1.WorkflowTemplate:
		return validate.ValidateWorkflowTemplate(getter, clusterGetter{}, o, nil, validate.ValidateOpts{})
	}
	return fmt.Errorf("cannot validate %T", obj)
}

// templateGetter serves the WorkflowTemplates found in the same run.
type templateGetter []any

func (g templateGetter) Get(name string) (*wfv1.WorkflowTemplate, error) {
	for _, t := range g {
		if t := t.(*wfv1.WorkflowTemplate); t.Name == name {
			return t, nil
		}
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Group: "argoproj.io", Resource: "workflowtemplates"}, name)
}

type clusterGetter struct{}

func (clusterGetter) Get(name string) (*wfv1.ClusterWorkflowTemplate, error) {
	return nil, apierrors.NewNotFound(schema.GroupResource{Group: "argoproj.io", Resource: "clusterworkflowtemplates"}, name)
}

func main() {
	log.SetOutput(io.Discard) // Argo logs what it skips; our output says it
	conformance.Main(argo{})
}
