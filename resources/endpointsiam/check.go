package endpointsiam

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/resources/gcpiam"
)

var (
	_ resources.InputChecker = (*PolicyDriver)(nil)
	_ resources.InputChecker = (*BindingDriver)(nil)
	_ resources.InputChecker = (*MemberDriver)(nil)
)

// CheckInputs refuses, offline, what IAM would refuse in policyData: a
// document that does not parse, and members that are not IAM members
// (gcpiam.CheckMember), each named with its role. A policyData not known
// yet is not checked.
func (d *PolicyDriver) CheckInputs(want resources.Attrs) error {
	text, ok := want["policyData"].(string)
	if !ok {
		return nil
	}
	doc, err := gcpiam.Parse(text)
	if err != nil {
		return &resources.AttrError{Path: []string{"policyData"}, Err: err}
	}
	var errs []error
	for _, b := range doc.Bindings {
		for _, m := range b.Members {
			if err := gcpiam.CheckMember(m); err != nil {
				errs = append(errs, &resources.AttrError{Path: []string{"policyData"}, Err: fmt.Errorf("binding of %s: %w", b.Role, err)})
			}
		}
	}
	return errors.Join(errs...)
}

// CheckInputs refuses, offline, the members IAM would refuse
// (gcpiam.CheckMember), each at its place in members. Members not known
// yet are not checked.
func (d *BindingDriver) CheckInputs(want resources.Attrs) error {
	list, _ := want["members"].([]any)
	var errs []error
	for i, v := range list {
		m, ok := v.(string)
		if !ok {
			continue
		}
		if err := gcpiam.CheckMember(m); err != nil {
			errs = append(errs, &resources.AttrError{Path: []string{"members", strconv.Itoa(i)}, Err: err})
		}
	}
	return errors.Join(errs...)
}

// CheckInputs refuses, offline, a member IAM would refuse
// (gcpiam.CheckMember). A member not known yet is not checked.
func (d *MemberDriver) CheckInputs(want resources.Attrs) error {
	m, ok := want["member"].(string)
	if !ok {
		return nil
	}
	if err := gcpiam.CheckMember(m); err != nil {
		return &resources.AttrError{Path: []string{"member"}, Err: err}
	}
	return nil
}
