package models

import "context"

// ScenariosHad lists the skills' scenarios already injected into this user's exercises, on any
// project, so an injection turn does not offer the same fault twice.
func (r ExerciseRepository) ScenariosHad(ctx context.Context, userID string) ([]string, error) {
	var out []string
	err := r.DB.WithContext(ctx).Model(&InjectedFault{}).
		Joins("JOIN exercises ON exercises.id = injected_faults.exercise_id").
		Where("exercises.user_id = ? AND injected_faults.scenario <> ''", userID).
		Distinct().Order("injected_faults.scenario").Pluck("injected_faults.scenario", &out).Error
	return out, err
}
