// Command argo4-validate checks rendered Argo Workflows and WorkflowTemplates
// with the validator of Argo Workflows v4, as `argo submit` and
// `argo template create` run it. See ../README.md.
package main

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	wfv1 "github.com/argoproj/argo-workflows/v4/pkg/apis/workflow/v1alpha1"
	"github.com/argoproj/argo-workflows/v4/util/logging"
	"github.com/argoproj/argo-workflows/v4/workflow/common"
	"github.com/argoproj/argo-workflows/v4/workflow/validate"

	conformance "hera-volcano/conformance/common"
)

// argo holds the context every v4 call needs: without a logger in it, Argo
// panics. Only errors are logged, to stderr; our output says what was skipped.
type argo struct{ ctx context.Context }

func (argo) Version() string {
	return "argo " + conformance.ModuleVersion("github.com/argoproj/argo-workflows/v4")
}

func (a argo) Parse(doc []byte) (any, error) {
	// strict=true is the CLI's default (--strict).
	res := common.ParseObjects(a.ctx, doc, true)
	if len(res) != 1 {
		return nil, fmt.Errorf("argo parsed %d objects from one document", len(res))
	}
	return res[0].Object, res[0].Err
}

func (a argo) Validate(obj any, templates []any) error {
	getter := templateGetter(templates)
	// The zero Opts and nil workflow defaults are what the API server
	// (in-process for a kube-client CLI) passes on CreateWorkflow and
	// CreateWorkflowTemplate; validate.WorkflowTemplate sets its own flags.
	switch o := obj.(type) {
	case *wfv1.Workflow:
		return validate.Workflow(a.ctx, getter, clusterGetter{}, o, nil, validate.Opts{})
	case *wfv1.WorkflowTemplate:
		return validate.WorkflowTemplate(a.ctx, getter, clusterGetter{}, o, nil, validate.Opts{})
	}
	return fmt.Errorf("cannot validate %T", obj)
}

// templateGetter serves the WorkflowTemplates found in the same run.
type templateGetter []any

func (g templateGetter) Get(_ context.Context, name string) (*wfv1.WorkflowTemplate, error) {
	for _, t := range g {
		if t := t.(*wfv1.WorkflowTemplate); t.Name == name {
			return t, nil
		}
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Group: "argoproj.io", Resource: "workflowtemplates"}, name)
}

type clusterGetter struct{}

func (clusterGetter) Get(_ context.Context, name string) (*wfv1.ClusterWorkflowTemplate, error) {
	return nil, apierrors.NewNotFound(schema.GroupResource{Group: "argoproj.io", Resource: "clusterworkflowtemplates"}, name)
}

func newArgo() argo {
	logger := logging.NewSlogLogger(logging.Error, logging.Text)
	return argo{ctx: logging.WithLogger(context.Background(), logger)}
}

func main() {
	conformance.Main(newArgo())
}
