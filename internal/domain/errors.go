package domain

// Types of the Temporal application errors activities and workflows fail with. Retry policies
// name the ones a retry cannot fix, and callers tell failures apart by them.
const (
	ErrTypeLLMAuth       = "LLMAuthError"
	ErrTypeLLMBadRequest = "LLMBadRequest"
	ErrTypeLLMConfig     = "LLMConfigError"
	// ErrTypeLLMUnavailable is a provider that failed or could not be reached; it is retried.
	ErrTypeLLMUnavailable = "LLMUnavailable"
	ErrTypeNoCredentials  = "CredentialsExpired"
	// ErrTypeTurnAborted is how an activity that stopped on the user's abort reports it.
	ErrTypeTurnAborted = "TurnAborted"
	// ErrTypeSessionDeleted is a tool call whose session was deleted while it ran.
	ErrTypeSessionDeleted = "SessionDeleted"
	// ErrTypeMCPCallMissing is an MCP call whose record is gone.
	ErrTypeMCPCallMissing = "MCPCallMissing"
	// ErrTypeExerciseOver is how an exercise's update validators refuse a request once it ended.
	ErrTypeExerciseOver = "ExerciseOver"
	// ErrTypeExerciseEmpty is an exercise with no recorded fault to check.
	ErrTypeExerciseEmpty = "ExerciseEmpty"
)
