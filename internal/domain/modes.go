package domain

// Copilot modes: which tools a chat may use and which system prompt it gets.
const (
	ModeTeachingAssistant = "teaching_assistant"
	// ModeLabAutomation may change the lab; its destructive tools may ask for approval.
	ModeLabAutomation = "lab_automation_assistant"
	// ModeTroubleshootingInjection breaks the lab on purpose for a student to repair. Only the
	// inject route starts it, and what it does is kept from the student.
	ModeTroubleshootingInjection = "troubleshooting_injection"
)
