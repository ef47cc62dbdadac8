package datadog

// The JSON this emulator reads and writes, declared from Datadog's API
// specification (the v2 OpenAPI document behind datadog-api-client-go
// v2.67.0, models RestrictionPolicy*, UserResponse, User, Organization,
// Role and APIErrorResponse), not shared with any client: a field a client
// gets wrong is not mirrored here. Only the fields the emulator answers are
// declared.

// policyResponse is a RestrictionPolicyResponse, the answer of GET and
// POST /api/v2/restriction_policy/{resource_id}.
type policyResponse struct {
	Data restrictionPolicy `json:"data"`
}

// restrictionPolicy is a RestrictionPolicy. Its fields are written in the
// order id, type, attributes.
type restrictionPolicy struct {
	ID         string           `json:"id"`   // the resource id, "<type>:<id>"
	Type       string           `json:"type"` // always policyType
	Attributes policyAttributes `json:"attributes"`
}

// policyAttributes is a RestrictionPolicyAttributes.
type policyAttributes struct {
	// Bindings is [] rather than null in an answer: the official clients
	// fail to decode a policy whose bindings are null.
	Bindings []binding `json:"bindings"`
}

// binding is a RestrictionPolicyBinding: a relation granted to principals.
// It is also the stored form of a binding.
type binding struct {
	Relation   string   `json:"relation"`
	Principals []string `json:"principals"`
}

// policyType is the JSON:API type of a restriction policy.
const policyType = "restriction_policy"

// updateRequest is a RestrictionPolicyUpdateRequest, the body of POST
// /api/v2/restriction_policy/{resource_id}, as decoded: pointers tell a
// field that is missing from one that is empty, as the API's required-field
// errors need.
type updateRequest struct {
	Data *struct {
		ID         string `json:"id"`
		Type       string `json:"type"`
		Attributes *struct {
			Bindings []struct {
				Relation   *string   `json:"relation"`
				Principals *[]string `json:"principals"`
			} `json:"bindings"`
		} `json:"attributes"`
	} `json:"data"`
}

// errorResponse is an APIErrorResponse, the body of every error answer.
type errorResponse struct {
	Errors []string `json:"errors"`
}

// userResponse is a UserResponse, the answer of GET /api/v2/current_user:
// the user, with its org and its roles in Included. The fields of this and
// the types below are in the alphabetical order of their JSON names, the
// order the emulator writes them in.
type userResponse struct {
	Data     user  `json:"data"`
	Included []any `json:"included"` // organization and role values
}

// user is a User.
type user struct {
	Attributes    userAttributes    `json:"attributes"`
	ID            string            `json:"id"` // a UUID
	Relationships userRelationships `json:"relationships"`
	Type          string            `json:"type"` // "users"
}

// userAttributes is a UserAttributes. Times are written as Datadog writes
// them, microseconds and an explicit +00:00 offset.
type userAttributes struct {
	CreatedAt      string  `json:"created_at"`
	Disabled       bool    `json:"disabled"`
	Email          string  `json:"email"`
	Handle         string  `json:"handle"`
	Icon           string  `json:"icon"`
	MFAEnabled     bool    `json:"mfa_enabled"`
	ModifiedAt     string  `json:"modified_at"`
	Name           string  `json:"name"`
	ServiceAccount bool    `json:"service_account"`
	Status         string  `json:"status"`
	Title          *string `json:"title"` // nullable: null when the user has none
	Verified       bool    `json:"verified"`
}

// userRelationships is a UserResponseRelationships.
type userRelationships struct {
	Org   toOne  `json:"org"`   // a RelationshipToOrganization
	Roles toMany `json:"roles"` // a RelationshipToRoles
}

// toOne is a JSON:API relationship to one object.
type toOne struct {
	Data ref `json:"data"`
}

// toMany is a JSON:API relationship to several objects.
type toMany struct {
	Data []ref `json:"data"`
}

// ref is a JSON:API resource identifier, such as a
// RelationshipToOrganizationData.
type ref struct {
	ID   string `json:"id"`
	Type string `json:"type"`
}

// organization is an Organization, as included in a UserResponse.
type organization struct {
	Attributes organizationAttributes `json:"attributes"`
	ID         string                 `json:"id"`   // the org's UUID
	Type       string                 `json:"type"` // "orgs"
}

// organizationAttributes is an OrganizationAttributes.
type organizationAttributes struct {
	CreatedAt  string `json:"created_at"`
	Disabled   bool   `json:"disabled"`
	ModifiedAt string `json:"modified_at"`
	Name       string `json:"name"`
	PublicID   string `json:"public_id"` // not the UUID that "org:" principals use
	Sharing    string `json:"sharing"`
	URL        string `json:"url"`
}

// role is a Role, as included in a UserResponse.
type role struct {
	Attributes roleAttributes `json:"attributes"`
	ID         string         `json:"id"`
	Type       string         `json:"type"` // "roles"
}

// roleAttributes is a RoleAttributes.
type roleAttributes struct {
	CreatedAt  string `json:"created_at"`
	ModifiedAt string `json:"modified_at"`
	Name       string `json:"name"`
	UserCount  int64  `json:"user_count"`
}
