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
// order Datadog writes them: type, id, attributes.
type restrictionPolicy struct {
	Type       string           `json:"type"` // always policyType
	ID         string           `json:"id"`   // the resource id, "<type>:<id>"
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
// the user, with its roles, their permissions and its org in Included. The
// fields of this and the types below are in the order Datadog writes them
// (a recording of GET /api/v2/current_user in 2026), which is not the
// order of the OpenAPI models.
type userResponse struct {
	Data     user  `json:"data"`
	Included []any `json:"included"` // role, permission and organization values
}

// user is a User.
type user struct {
	Type          string            `json:"type"` // "users"
	ID            string            `json:"id"`   // a UUID
	Attributes    userAttributes    `json:"attributes"`
	Relationships userRelationships `json:"relationships"`
}

// userAttributes is a UserAttributes, with the attributes Datadog sends
// for the current user: mfa_enabled, in the model, is not among them.
// Times are written as Datadog writes them, microseconds and an explicit
// +00:00 offset.
type userAttributes struct {
	UUID                string   `json:"uuid"` // the id again
	Name                *string  `json:"name"` // null for a user who never set one
	Handle              string   `json:"handle"`
	CreatedAt           string   `json:"created_at"`
	ModifiedAt          string   `json:"modified_at"`
	Email               string   `json:"email"`
	Icon                string   `json:"icon"`  // a Gravatar URL
	Title               *string  `json:"title"` // null when the user has none
	Verified            bool     `json:"verified"`
	ServiceAccount      bool     `json:"service_account"`
	Disabled            bool     `json:"disabled"`
	AllowedLoginMethods []string `json:"allowed_login_methods"` // [] rather than null
	Status              string   `json:"status"`                // "Active", "Pending" or "Disabled"
	LastLoginTime       *string  `json:"last_login_time"`       // null: the key's owner never signed in to the UI
}

// userRelationships is a UserResponseRelationships. team_roles, which
// Datadog sends, is not in the OpenAPI model (clients keep it as an
// additional property); other_orgs and other_users, which are, it does not
// send for the current user.
type userRelationships struct {
	Roles     toMany `json:"roles"`      // a RelationshipToRoles
	Org       toOne  `json:"org"`        // a RelationshipToOrganization
	TeamRoles toMany `json:"team_roles"` // [] for a user in no team
}

// toOne is a JSON:API relationship to one object.
type toOne struct {
	Data ref `json:"data"`
}

// toMany is a JSON:API relationship to several objects; Data is [] rather
// than null.
type toMany struct {
	Data []ref `json:"data"`
}

// ref is a JSON:API resource identifier, such as a
// RelationshipToOrganizationData.
type ref struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

// role is a Role, as included in a UserResponse.
type role struct {
	Type          string            `json:"type"` // "roles"
	ID            string            `json:"id"`
	Attributes    roleAttributes    `json:"attributes"`
	Relationships roleRelationships `json:"relationships"`
}

// roleAttributes is a RoleAttributes, as included for the current user:
// without the user_count and team_count the roles API sends.
type roleAttributes struct {
	Name       string `json:"name"`
	Managed    bool   `json:"managed"` // true for Datadog's own roles
	CreatedAt  string `json:"created_at"`
	ModifiedAt string `json:"modified_at"`
}

// roleRelationships is a RoleResponseRelationships.
type roleRelationships struct {
	Permissions toMany `json:"permissions"` // a RelationshipToPermissions
}

// permission is a Permission, as included in a UserResponse.
type permission struct {
	Type       string               `json:"type"` // "permissions"
	ID         string               `json:"id"`
	Attributes permissionAttributes `json:"attributes"`
}

// permissionAttributes is a PermissionAttributes.
type permissionAttributes struct {
	Name        string `json:"name"`
	DisplayName string `json:"display_name"`
	Description string `json:"description"`
	Created     string `json:"created"`
	GroupName   string `json:"group_name"`
	DisplayType string `json:"display_type"` // "read", "write" or "other"
	Restricted  bool   `json:"restricted"`
}

// organization is an Organization, as included in a UserResponse.
type organization struct {
	Type       string                 `json:"type"` // "orgs"
	ID         string                 `json:"id"`   // the org's UUID
	Attributes organizationAttributes `json:"attributes"`
}

// organizationAttributes is an OrganizationAttributes.
type organizationAttributes struct {
	PublicID    string  `json:"public_id"` // not the UUID that "org:" principals use
	Name        string  `json:"name"`
	Description *string `json:"description"` // null when unset
	Sharing     string  `json:"sharing"`
	URL         *string `json:"url"` // null when unset
	Disabled    bool    `json:"disabled"`
	CreatedAt   string  `json:"created_at"`
	ModifiedAt  string  `json:"modified_at"`
}

// userTeamsResponse is a UserTeamsResponse, the answer of GET
// /api/v2/users/{user_uuid}/memberships: the user's team memberships.
type userTeamsResponse struct {
	Data []userTeam `json:"data"` // [] for a user in no team
}

// userTeam is a UserTeam (JSON:API type "team_memberships"), in the order
// of a recorded answer of Datadog: id, type, attributes, relationships.
type userTeam struct {
	ID            string                `json:"id"` // "TeamMembership-<team>-<number>"
	Type          string                `json:"type"`
	Attributes    userTeamAttributes    `json:"attributes"`
	Relationships userTeamRelationships `json:"relationships"`
}

// userTeamAttributes is a UserTeamAttributes.
type userTeamAttributes struct {
	ProvisionedBy   *string `json:"provisioned_by"`    // null: not provisioned by SAML or SCIM
	ProvisionedByID *string `json:"provisioned_by_id"` // null likewise
	Role            *string `json:"role"`              // null for a plain member, "admin" for a team admin
}

// userTeamRelationships is a UserTeamRelationships: the membership's team
// (type "team") and user.
type userTeamRelationships struct {
	Team toOne `json:"team"`
	User toOne `json:"user"`
}
