package credentials

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// DefaultRedisPrefix starts the Redis keys of NewRedisStore when no prefix is given.
const DefaultRedisPrefix = "gns3copilot:credential:"

type redisStore struct {
	client *redis.Client
	sealer *Sealer
	prefix string
}

// NewRedisStore returns a Store keeping each secret sealed in a Redis string at prefix+key, with
// the TTL set on the key so Redis drops it by itself. An empty prefix means DefaultRedisPrefix.
func NewRedisStore(client *redis.Client, sealer *Sealer, prefix string) Store {
	if prefix == "" {
		prefix = DefaultRedisPrefix
	}
	return &redisStore{client: client, sealer: sealer, prefix: prefix}
}

func (s *redisStore) Put(ctx context.Context, key, secret string, ttl time.Duration) error {
	if err := checkPut(key, secret, ttl); err != nil {
		return err
	}
	sealed, err := s.sealer.Seal([]byte(secret), bindingFor(key))
	if err != nil {
		return err
	}
	if err := s.client.Set(ctx, s.prefix+key, sealed, ttl).Err(); err != nil {
		return fmt.Errorf("credentials: storing %s in Redis: %w", key, err)
	}
	return nil
}

func (s *redisStore) Get(ctx context.Context, key string) (string, error) {
	if err := checkKey(key); err != nil {
		return "", err
	}
	sealed, err := s.client.Get(ctx, s.prefix+key).Result()
	if errors.Is(err, redis.Nil) {
		return "", ErrNotFound
	}
	if err != nil {
		return "", fmt.Errorf("credentials: reading %s from Redis: %w", key, err)
	}
	plain, err := s.sealer.Open(sealed, bindingFor(key))
	if err != nil {
		return "", fmt.Errorf("credentials: opening %s: %w", key, err)
	}
	return string(plain), nil
}

func (s *redisStore) Delete(ctx context.Context, key string) error {
	if err := checkKey(key); err != nil {
		return err
	}
	if err := s.client.Del(ctx, s.prefix+key).Err(); err != nil {
		return fmt.Errorf("credentials: deleting %s from Redis: %w", key, err)
	}
	return nil
}
