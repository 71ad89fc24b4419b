package models

import (
	"encoding/json"
	"errors"
	"fmt"

	"gorm.io/gorm"
)

// MetadataModeKey is the key of a session's metadata that records its copilot mode, as GNS3's
// own copilot (v3.1) keeps it, so sessions can be listed by mode.
const MetadataModeKey = "copilot_mode"

// withMode returns metadata (a JSON object) with its copilot mode set, other keys kept.
func withMode(metadata, mode string) string {
	obj := map[string]json.RawMessage{}
	if metadata != "" && json.Unmarshal([]byte(metadata), &obj) != nil {
		obj = map[string]json.RawMessage{}
	}
	v, _ := json.Marshal(mode)
	if string(obj[MetadataModeKey]) == string(v) && metadata != "" {
		return metadata
	}
	obj[MetadataModeKey] = v
	b, _ := json.Marshal(obj)
	return string(b)
}

// SessionMode reads the copilot mode recorded in a session's metadata ("" when none is).
func SessionMode(s *ChatSession) string {
	var md struct {
		Mode string `json:"copilot_mode"`
	}
	_ = json.Unmarshal([]byte(s.Metadata), &md)
	return md.Mode
}

// recordMode keeps a session's metadata in step with the mode of its latest turn, without
// counting as an update of the conversation.
func recordMode(tx *gorm.DB, s *ChatSession, mode string) error {
	md := withMode(s.Metadata, mode)
	if md == s.Metadata {
		return nil
	}
	if err := tx.Model(&ChatSession{}).Where("thread_id = ?", s.ThreadID).UpdateColumn("metadata", md).Error; err != nil {
		return err
	}
	s.Metadata = md
	return nil
}

// backfillSessionModes records the mode of sessions created before sessions recorded it, from
// their latest turn. Once done it finds nothing to do.
func backfillSessionModes(db *gorm.DB) error {
	var missing []ChatSession
	if err := db.Where("metadata NOT LIKE ?", `%"`+MetadataModeKey+`"%`).Find(&missing).Error; err != nil {
		return err
	}
	for i := range missing {
		var t ChatTurn
		// A typed exercise request is no copilot mode: the injection before it is.
		err := db.Where("session_id = ? AND mode <> ?", missing[i].ThreadID, ExerciseRequestMode).Order("seq DESC").Take(&t).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		if err := recordMode(db, &missing[i], t.Mode); err != nil {
			return fmt.Errorf("recording the mode of session %s: %w", missing[i].ThreadID, err)
		}
	}
	return nil
}
