// Command ferretdb-embedded runs FerretDB v1 (MongoDB wire protocol) for local development and
// tests of the distributed runtime. It is built and started by scripts/infra.sh; it embeds the
// github.com/FerretDB/FerretDB/ferretdb package because the upstream cmd/ferretdb, when built from
// the module cache, panics at start-up on the missing generated build/version/version.txt.
//
// Backends: PostgreSQL (-postgresql-url: what scripts/infra.sh runs, on Debian's PostgreSQL) or
// SQLite (-sqlite-dir: kept for comparisons). On SQLite every `_id` lookup and guarded upsert scans
// the table. On PostgreSQL, FerretDB's updates by `_id` use its unique btree, and its lookups (sent
// as `_jsonb->'f' @> value`, which a btree cannot serve) use the GIN twins that
// scripts/infra/postgres/ferretdb-indexes.sql adds to its indexes.
//
// Telemetry: the embeddable package never creates a telemetry reporter and locks telemetry
// to disabled; it makes no outside network connection.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/FerretDB/FerretDB/ferretdb"
	"go.mongodb.org/mongo-driver/bson"
	"go.mongodb.org/mongo-driver/mongo"
	"go.mongodb.org/mongo-driver/mongo/options"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:27018", "TCP address to listen on (host:port); empty: none (with -listen-tls)")
	listenTLS := flag.String("listen-tls", "", "TLS address to listen on (host:port), with -tls-cert-file and -tls-key-file")
	tlsCert := flag.String("tls-cert-file", "", "the TLS listener's certificate (PEM)")
	tlsKey := flag.String("tls-key-file", "", "the TLS listener's private key (PEM)")
	pgURL := flag.String("postgresql-url", "", "PostgreSQL backend: connection URL, e.g. postgres:///ferretdb?host=/path/to/socket/dir&user=postgres")
	dir := flag.String("sqlite-dir", "", "SQLite backend: directory for the databases (one file per MongoDB database)")
	level := flag.String("log-level", "info", "log level: debug, info, warn, error")
	ping := flag.String("ping", "", "client mode: send a MongoDB `ping` to this URI and exit 0 on success")
	pingUser := flag.String("ping-user", "", "with -ping: authenticate as this user (PLAIN), the password from $FERRETDB_PING_PASSWORD")
	smoke := flag.Bool("smoke", false, "with -ping: also insert, find and drop a document in database infra_smoke")
	flag.Parse()

	if *ping != "" {
		if err := runPing(*ping, *pingUser, os.Getenv("FERRETDB_PING_PASSWORD"), *smoke); err != nil {
			fmt.Fprintf(os.Stderr, "ferretdb-embedded: ping %s: %v\n", *ping, err)
			os.Exit(1)
		}
		return
	}

	if (*pgURL == "") == (*dir == "") {
		fmt.Fprintln(os.Stderr, "ferretdb-embedded: exactly one of -postgresql-url and -sqlite-dir is required")
		os.Exit(2)
	}

	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(*level)); err != nil {
		fmt.Fprintf(os.Stderr, "ferretdb-embedded: bad -log-level: %v\n", err)
		os.Exit(2)
	}

	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: lvl}))
	slog.SetDefault(logger)

	// No client certificate is asked for (FerretDB's TLSCAFile would require one): clients authenticate
	// with a user and password (PLAIN, passed on to PostgreSQL), inside TLS.
	config := &ferretdb.Config{
		Listener: ferretdb.ListenerConfig{TCP: *listen, TLS: *listenTLS, TLSCertFile: *tlsCert, TLSKeyFile: *tlsKey},
		Logger:   logger,
	}
	backend := "postgresql"

	if *pgURL != "" {
		config.Handler = "postgresql"
		config.PostgreSQLURL = *pgURL
	} else {
		abs, err := filepath.Abs(*dir)
		if err != nil {
			logger.Error("resolve sqlite dir", "error", err)
			os.Exit(1)
		}
		if err = os.MkdirAll(abs, 0o755); err != nil {
			logger.Error("create sqlite dir", "error", err)
			os.Exit(1)
		}

		// The SQLite backend wants a directory URI ending with "/".
		config.Handler = "sqlite"
		config.SQLiteURL = "file:" + strings.TrimSuffix(abs, "/") + "/"
		backend = config.SQLiteURL
	}

	f, err := ferretdb.New(config)
	if err != nil {
		logger.Error("ferretdb.New", "error", err)
		os.Exit(1)
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := f.Run(ctx); err != nil {
			logger.Error("ferretdb.Run", "error", err)
		}
	}()

	// MongoDBURI needs the listener to be set up by Run; it blocks until then.
	logger.Info("ferretdb-embedded ready", "uri", f.MongoDBURI(), "backend", backend)

	<-done
	logger.Info("ferretdb-embedded stopped")
}

// runPing is a real wire-protocol client check (the Node `mongodb` package is not a dependency
// of the repo, and mongo-driver is already in FerretDB's module graph).
func runPing(uri, user, password string, smoke bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	opts := options.Client().ApplyURI(uri).SetServerSelectionTimeout(3 * time.Second).SetConnectTimeout(2 * time.Second)
	if user != "" {
		// FerretDB v1's PLAIN: the user and password are PostgreSQL's, checked by it at the first command.
		opts.SetAuth(options.Credential{AuthMechanism: "PLAIN", AuthSource: "$external", Username: user, Password: password})
	}
	client, err := mongo.Connect(ctx, opts)
	if err != nil {
		return err
	}
	defer client.Disconnect(context.Background()) //nolint:errcheck // best effort

	var res bson.M
	if err = client.Database("admin").RunCommand(ctx, bson.D{{Key: "ping", Value: 1}}).Decode(&res); err != nil {
		return err
	}
	if !smoke {
		fmt.Println("ping ok")
		return nil
	}

	coll := client.Database("infra_smoke").Collection("smoke")
	id := fmt.Sprintf("smoke-%d", time.Now().UnixNano())
	if _, err = coll.InsertOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "n", Value: 42}}); err != nil {
		return fmt.Errorf("insert: %w", err)
	}
	var got bson.M
	if err = coll.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&got); err != nil {
		return fmt.Errorf("find: %w", err)
	}
	if err = client.Database("infra_smoke").Drop(ctx); err != nil {
		return fmt.Errorf("drop: %w", err)
	}
	fmt.Printf("ping ok; insert/find ok: %v\n", got)
	return nil
}
