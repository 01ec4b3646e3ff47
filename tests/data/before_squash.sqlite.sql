-- A database at the schema of every migration before the squash (quotas 0001-0007, scheduling 0001-0030,
-- security 0001-0004, changerequests 0001, identity 0001 and the third-party apps' of the time), with its
-- django_migrations rows and no other data. Loaded by tests/test_migrations.py, which upgrades it with the squashed
-- migrations. Made from `sqlite_master` and django_migrations of a SQLite file (the embedded default)
-- migrated at the time.

CREATE TABLE "auth_group" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "name" varchar(150) NOT NULL UNIQUE);
CREATE TABLE "auth_group_permissions" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "group_id" integer NOT NULL REFERENCES "auth_group" ("id") DEFERRABLE INITIALLY DEFERRED, "permission_id" integer NOT NULL REFERENCES "auth_permission" ("id") DEFERRABLE INITIALLY DEFERRED);
CREATE TABLE "auth_permission" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "content_type_id" integer NOT NULL REFERENCES "django_content_type" ("id") DEFERRABLE INITIALLY DEFERRED, "codename" varchar(100) NOT NULL, "name" varchar(255) NOT NULL);
CREATE TABLE "auth_user" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "password" varchar(128) NOT NULL, "last_login" datetime NULL, "is_superuser" bool NOT NULL, "username" varchar(150) NOT NULL UNIQUE, "last_name" varchar(150) NOT NULL, "email" varchar(254) NOT NULL, "is_staff" bool NOT NULL, "is_active" bool NOT NULL, "date_joined" datetime NOT NULL, "first_name" varchar(150) NOT NULL);
CREATE TABLE "auth_user_groups" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "user_id" integer NOT NULL REFERENCES "auth_user" ("id") DEFERRABLE INITIALLY DEFERRED, "group_id" integer NOT NULL REFERENCES "auth_group" ("id") DEFERRABLE INITIALLY DEFERRED);
CREATE TABLE "auth_user_user_permissions" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "user_id" integer NOT NULL REFERENCES "auth_user" ("id") DEFERRABLE INITIALLY DEFERRED, "permission_id" integer NOT NULL REFERENCES "auth_permission" ("id") DEFERRABLE INITIALLY DEFERRED);
CREATE TABLE "axes_accessattempt" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "user_agent" varchar(255) NOT NULL, "ip_address" char(39) NULL, "username" varchar(255) NULL, "http_accept" varchar(1025) NOT NULL, "path_info" varchar(255) NOT NULL, "attempt_time" datetime NOT NULL, "get_data" text NOT NULL, "post_data" text NOT NULL, "failures_since_start" integer unsigned NOT NULL CHECK ("failures_since_start" >= 0));
CREATE TABLE "axes_accessattemptexpiration" ("access_attempt_id" integer NOT NULL PRIMARY KEY REFERENCES "axes_accessattempt" ("id") DEFERRABLE INITIALLY DEFERRED, "expires_at" datetime NOT NULL);
CREATE TABLE "axes_accessfailurelog" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "user_agent" varchar(255) NOT NULL, "ip_address" char(39) NULL, "username" varchar(255) NULL, "http_accept" varchar(1025) NOT NULL, "path_info" varchar(255) NOT NULL, "attempt_time" datetime NOT NULL, "locked_out" bool NOT NULL);
CREATE TABLE "axes_accesslog" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "user_agent" varchar(255) NOT NULL, "ip_address" char(39) NULL, "username" varchar(255) NULL, "http_accept" varchar(1025) NOT NULL, "path_info" varchar(255) NOT NULL, "attempt_time" datetime NOT NULL, "logout_time" datetime NULL, "session_hash" varchar(64) NOT NULL);
CREATE TABLE "changerequests_changerequest" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "cluster" varchar(63) NOT NULL, "summary" varchar(500) NOT NULL, "reason" text NOT NULL, "changes" text NOT NULL CHECK ((JSON_VALID("changes") OR "changes" IS NULL)), "base" text NOT NULL CHECK ((JSON_VALID("base") OR "base" IS NULL)), "trees_revision" bigint unsigned NOT NULL CHECK ("trees_revision" >= 0), "whatif" text NOT NULL CHECK ((JSON_VALID("whatif") OR "whatif" IS NULL)), "needs_room" text NOT NULL CHECK ((JSON_VALID("needs_room") OR "needs_room" IS NULL)), "status" varchar(12) NOT NULL, "comment" text NOT NULL, "outcome" text NOT NULL, "created" datetime NOT NULL, "updated" datetime NOT NULL, "decided" datetime NULL, "requester_id" integer NULL REFERENCES "auth_user" ("id") DEFERRABLE INITIALLY DEFERRED, "reviewer_id" integer NULL REFERENCES "auth_user" ("id") DEFERRABLE INITIALLY DEFERRED);
CREATE TABLE "changerequests_historicalchangerequest" ("id" bigint NOT NULL, "cluster" varchar(63) NOT NULL, "summary" varchar(500) NOT NULL, "reason" text NOT NULL, "changes" text NOT NULL CHECK ((JSON_VALID("changes") OR "changes" IS NULL)), "base" text NOT NULL CHECK ((JSON_VALID("base") OR "base" IS NULL)), "trees_revision" bigint unsigned NOT NULL CHECK ("trees_revision" >= 0), "whatif" text NOT NULL CHECK ((JSON_VALID("whatif") OR "whatif" IS NULL)), "needs_room" text NOT NULL CHECK ((JSON_VALID("needs_room") OR "needs_room" IS NULL)), "status" varchar(12) NOT NULL, "comment" text NOT NULL, "outcome" text NOT NULL, "created" datetime NOT NULL, "decided" datetime NULL, "history_id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "history_date" datetime NOT NULL, "history_change_reason" varchar(100) NULL, "history_type" varchar(1) NOT NULL, "history_user_id" integer NULL REFERENCES "auth_user" ("id") DEFERRABLE INITIALLY DEFERRED, "requester_id" integer NULL, "reviewer_id" integer NULL);
CREATE TABLE "django_admin_log" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "object_id" text NULL, "object_repr" varchar(200) NOT NULL, "action_flag" smallint unsigned NOT NULL CHECK ("action_flag" >= 0), "change_message" text NOT NULL, "content_type_id" integer NULL REFERENCES "django_content_type" ("id") DEFERRABLE INITIALLY DEFERRED, "user_id" integer NOT NULL REFERENCES "auth_user" ("id") DEFERRABLE INITIALLY DEFERRED, "action_time" datetime NOT NULL);
CREATE TABLE "django_celery_beat_clockedschedule" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "clocked_time" datetime NOT NULL);
CREATE TABLE "django_celery_beat_crontabschedule" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "minute" varchar(240) NOT NULL, "hour" varchar(96) NOT NULL, "day_of_week" varchar(64) NOT NULL, "day_of_month" varchar(124) NOT NULL, "month_of_year" varchar(64) NOT NULL, "timezone" varchar(63) NOT NULL);
CREATE TABLE "django_celery_beat_intervalschedule" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "every" integer NOT NULL, "period" varchar(24) NOT NULL);
CREATE TABLE "django_celery_beat_periodictask" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "name" varchar(200) NOT NULL UNIQUE, "task" varchar(200) NOT NULL, "args" text NOT NULL, "kwargs" text NOT NULL, "queue" varchar(200) NULL, "exchange" varchar(200) NULL, "routing_key" varchar(200) NULL, "expires" datetime NULL, "enabled" bool NOT NULL, "last_run_at" datetime NULL, "total_run_count" integer unsigned NOT NULL CHECK ("total_run_count" >= 0), "date_changed" datetime NOT NULL, "description" text NOT NULL, "crontab_id" integer NULL REFERENCES "django_celery_beat_crontabschedule" ("id") DEFERRABLE INITIALLY DEFERRED, "interval_id" integer NULL REFERENCES "django_celery_beat_intervalschedule" ("id") DEFERRABLE INITIALLY DEFERRED, "solar_id" integer NULL REFERENCES "django_celery_beat_solarschedule" ("id") DEFERRABLE INITIALLY DEFERRED, "one_off" bool NOT NULL, "start_time" datetime NULL, "priority" integer unsigned NULL CHECK ("priority" >= 0), "headers" text NOT NULL, "clocked_id" integer NULL REFERENCES "django_celery_beat_clockedschedule" ("id") DEFERRABLE INITIALLY DEFERRED, "expire_seconds" integer unsigned NULL CHECK ("expire_seconds" >= 0));
CREATE TABLE "django_celery_beat_periodictasks" ("ident" smallint NOT NULL PRIMARY KEY, "last_update" datetime NOT NULL);
CREATE TABLE "django_celery_beat_solarschedule" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "event" varchar(24) NOT NULL, "latitude" decimal NOT NULL, "longitude" decimal NOT NULL);
CREATE TABLE "django_content_type" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "app_label" varchar(100) NOT NULL, "model" varchar(100) NOT NULL);
CREATE TABLE "django_migrations" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "app" varchar(255) NOT NULL, "name" varchar(255) NOT NULL, "applied" datetime NOT NULL);
CREATE TABLE "django_session" ("session_key" varchar(40) NOT NULL PRIMARY KEY, "session_data" text NOT NULL, "expire_date" datetime NOT NULL);
CREATE TABLE "identity_oidcidentity" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "issuer" varchar(255) NOT NULL, "subject" varchar(255) NOT NULL, "created" datetime NOT NULL, "last_synced" datetime NULL, "user_id" integer NOT NULL UNIQUE REFERENCES "auth_user" ("id") DEFERRABLE INITIALLY DEFERRED, CONSTRAINT "oidc_identity_issuer_subject" UNIQUE ("issuer", "subject"));
CREATE TABLE "quotas_historicalnamespace" ("id" bigint NOT NULL, "created" datetime NOT NULL, "name" varchar(63) NOT NULL, "weight" integer unsigned NOT NULL CHECK ("weight" >= 0), "hard" text NULL CHECK ((JSON_VALID("hard") OR "hard" IS NULL)), "history_id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "history_date" datetime NOT NULL, "history_change_reason" varchar(100) NULL, "history_type" varchar(1) NOT NULL, "history_user_id" integer NULL REFERENCES "auth_user" ("id") DEFERRABLE INITIALLY DEFERRED, "default_queue_id" bigint NULL, "quota_group_id" bigint NULL);
CREATE TABLE "quotas_historicalqueue" ("id" bigint NOT NULL, "created" datetime NOT NULL, "name" varchar(63) NOT NULL, "weight" integer unsigned NOT NULL CHECK ("weight" >= 0), "capability" text NOT NULL CHECK ((JSON_VALID("capability") OR "capability" IS NULL)), "deserved" text NOT NULL CHECK ((JSON_VALID("deserved") OR "deserved" IS NULL)), "guarantee" text NOT NULL CHECK ((JSON_VALID("guarantee") OR "guarantee" IS NULL)), "reclaimable" bool NOT NULL, "priority" integer unsigned NOT NULL CHECK ("priority" >= 0), "state" varchar(8) NOT NULL, "closed_by_parent" bool NOT NULL, "history_id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "history_date" datetime NOT NULL, "history_change_reason" varchar(100) NULL, "history_type" varchar(1) NOT NULL, "history_user_id" integer NULL REFERENCES "auth_user" ("id") DEFERRABLE INITIALLY DEFERRED, "parent_id" bigint NULL, "borrowing_limit" text NULL CHECK ((JSON_VALID("borrowing_limit") OR "borrowing_limit" IS NULL)), "lending_limit" text NULL CHECK ((JSON_VALID("lending_limit") OR "lending_limit" IS NULL)), "allow_non_preemptible" bool NOT NULL, "max_priority" integer NULL, "min_runtime" integer unsigned NULL CHECK ("min_runtime" >= 0), "description" text NOT NULL);
CREATE TABLE "quotas_historicalqueue_teams" ("id" bigint NOT NULL, "m2m_history_id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "group_id" integer NULL, "history_id" integer NOT NULL, "queue_id" bigint NULL);
CREATE TABLE "quotas_historicalquotagroup" ("id" bigint NOT NULL, "created" datetime NOT NULL, "name" varchar(253) NOT NULL, "is_parent" bool NOT NULL, "min" text NOT NULL CHECK ((JSON_VALID("min") OR "min" IS NULL)), "max" text NOT NULL CHECK ((JSON_VALID("max") OR "max" IS NULL)), "shared_weight" text NULL CHECK ((JSON_VALID("shared_weight") OR "shared_weight" IS NULL)), "allow_lent" bool NOT NULL, "tree_id" varchar(63) NOT NULL, "min_scale_exempt" bool NOT NULL, "history_id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "history_date" datetime NOT NULL, "history_change_reason" varchar(100) NULL, "history_type" varchar(1) NOT NULL, "history_user_id" integer NULL REFERENCES "auth_user" ("id") DEFERRABLE INITIALLY DEFERRED, "parent_id" bigint NULL, "borrowing_limit" text NULL CHECK ((JSON_VALID("borrowing_limit") OR "borrowing_limit" IS NULL)), "lending_limit" text NULL CHECK ((JSON_VALID("lending_limit") OR "lending_limit" IS NULL)), "description" text NOT NULL);
CREATE TABLE "quotas_historicalquotagroup_teams" ("id" bigint NOT NULL, "m2m_history_id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "group_id" integer NULL, "history_id" integer NOT NULL, "quotagroup_id" bigint NULL);
CREATE TABLE "quotas_namespace" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "version" bigint unsigned NOT NULL CHECK ("version" >= 0), "created" datetime NOT NULL, "updated" datetime NOT NULL, "name" varchar(63) NOT NULL UNIQUE, "weight" integer unsigned NOT NULL CHECK ("weight" >= 0), "hard" text NULL CHECK ((JSON_VALID("hard") OR "hard" IS NULL)), "default_queue_id" bigint NULL REFERENCES "quotas_queue" ("id") DEFERRABLE INITIALLY DEFERRED, "quota_group_id" bigint NULL REFERENCES "quotas_quotagroup" ("id") DEFERRABLE INITIALLY DEFERRED, CONSTRAINT "namespace_weight_positive" CHECK ("weight" >= 1));
CREATE TABLE "quotas_queue" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "version" bigint unsigned NOT NULL CHECK ("version" >= 0), "created" datetime NOT NULL, "updated" datetime NOT NULL, "name" varchar(63) NOT NULL UNIQUE, "weight" integer unsigned NOT NULL CHECK ("weight" >= 0), "capability" text NOT NULL CHECK ((JSON_VALID("capability") OR "capability" IS NULL)), "deserved" text NOT NULL CHECK ((JSON_VALID("deserved") OR "deserved" IS NULL)), "guarantee" text NOT NULL CHECK ((JSON_VALID("guarantee") OR "guarantee" IS NULL)), "reclaimable" bool NOT NULL, "priority" integer unsigned NOT NULL CHECK ("priority" >= 0), "state" varchar(8) NOT NULL, "closed_by_parent" bool NOT NULL, "borrowing_limit" text NULL CHECK ((JSON_VALID("borrowing_limit") OR "borrowing_limit" IS NULL)), "lending_limit" text NULL CHECK ((JSON_VALID("lending_limit") OR "lending_limit" IS NULL)), "allow_non_preemptible" bool NOT NULL, "max_priority" integer NULL, "min_runtime" integer unsigned NULL CHECK ("min_runtime" >= 0), "description" text NOT NULL, "parent_id" bigint NULL REFERENCES "quotas_queue" ("id") DEFERRABLE INITIALLY DEFERRED, CONSTRAINT "queue_weight_range" CHECK (("weight" >= 1 AND "weight" <= 65535)), CONSTRAINT "queue_parent_unless_root" CHECK (("parent_id" IS NOT NULL OR "name" = 'root')));
CREATE TABLE "quotas_queue_teams" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "queue_id" bigint NOT NULL REFERENCES "quotas_queue" ("id") DEFERRABLE INITIALLY DEFERRED, "group_id" integer NOT NULL REFERENCES "auth_group" ("id") DEFERRABLE INITIALLY DEFERRED);
CREATE TABLE "quotas_quotagroup" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "version" bigint unsigned NOT NULL CHECK ("version" >= 0), "created" datetime NOT NULL, "updated" datetime NOT NULL, "name" varchar(253) NOT NULL UNIQUE, "is_parent" bool NOT NULL, "min" text NOT NULL CHECK ((JSON_VALID("min") OR "min" IS NULL)), "max" text NOT NULL CHECK ((JSON_VALID("max") OR "max" IS NULL)), "shared_weight" text NULL CHECK ((JSON_VALID("shared_weight") OR "shared_weight" IS NULL)), "allow_lent" bool NOT NULL, "tree_id" varchar(63) NOT NULL, "min_scale_exempt" bool NOT NULL, "borrowing_limit" text NULL CHECK ((JSON_VALID("borrowing_limit") OR "borrowing_limit" IS NULL)), "lending_limit" text NULL CHECK ((JSON_VALID("lending_limit") OR "lending_limit" IS NULL)), "description" text NOT NULL, "parent_id" bigint NULL REFERENCES "quotas_quotagroup" ("id") DEFERRABLE INITIALLY DEFERRED, CONSTRAINT "quota_group_parent_unless_root" CHECK (("parent_id" IS NOT NULL OR "name" = 'root')));
CREATE TABLE "quotas_quotagroup_teams" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "quotagroup_id" bigint NOT NULL REFERENCES "quotas_quotagroup" ("id") DEFERRABLE INITIALLY DEFERRED, "group_id" integer NOT NULL REFERENCES "auth_group" ("id") DEFERRABLE INITIALLY DEFERRED);
CREATE TABLE "quotas_revision" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "key" varchar(64) NOT NULL UNIQUE, "value" bigint unsigned NOT NULL CHECK ("value" >= 0));
CREATE TABLE "scheduling_cluster" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "name" varchar(63) NOT NULL UNIQUE, "description" varchar(255) NOT NULL, "created" datetime NOT NULL, "node_heartbeat_timeout" integer unsigned NOT NULL CHECK ("node_heartbeat_timeout" >= 0), "scheduler_policy" text NOT NULL, "simulated" bool NOT NULL, "nodes_checked_at" datetime NULL, "nodes_grace_from" datetime NULL, "pod_eviction_timeout" integer unsigned NOT NULL CHECK ("pod_eviction_timeout" >= 0), "scheduler_name" varchar(63) NOT NULL, "source" varchar(10) NOT NULL, "tree_source" varchar(10) NOT NULL, "kubeconfig_encrypted" text NOT NULL);
CREATE TABLE "scheduling_clustercounters" ("cluster_id" bigint NOT NULL PRIMARY KEY REFERENCES "scheduling_cluster" ("id") DEFERRABLE INITIALLY DEFERRED, "counts" text NOT NULL CHECK ((JSON_VALID("counts") OR "counts" IS NULL)));
CREATE TABLE "scheduling_clusterfeed" ("cluster_id" bigint NOT NULL PRIMARY KEY REFERENCES "scheduling_cluster" ("id") DEFERRABLE INITIALLY DEFERRED, "epoch" char(32) NOT NULL, "pruned_through" bigint NOT NULL, "last_mirror" varchar(64) NOT NULL, "last_mirror_rev" bigint NOT NULL, "last_queue" varchar(200) NOT NULL, "last_session_at" datetime NULL);
CREATE TABLE "scheduling_clusterlease" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "key" bigint NOT NULL, "owner" varchar(64) NOT NULL, "expires" datetime NULL, "cluster_id" bigint NOT NULL REFERENCES "scheduling_cluster" ("id") DEFERRABLE INITIALLY DEFERRED, CONSTRAINT "cluster_lease_unique" UNIQUE ("cluster_id", "key"));
CREATE TABLE "scheduling_eviction" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "pod_uid" varchar(520) NOT NULL, "namespace" varchar(63) NOT NULL, "node" varchar(253) NOT NULL, "action" varchar(16) NOT NULL, "reason" varchar(63) NOT NULL, "message" text NOT NULL, "preemptor" varchar(520) NOT NULL, "blocker" text NULL CHECK ((JSON_VALID("blocker") OR "blocker" IS NULL)), "created" datetime NOT NULL, "cluster_id" bigint NOT NULL REFERENCES "scheduling_cluster" ("id") DEFERRABLE INITIALLY DEFERRED, "pod_id" bigint NULL REFERENCES "scheduling_pod" ("id") DEFERRABLE INITIALLY DEFERRED, "session_id" bigint NULL REFERENCES "scheduling_schedulingsession" ("id") DEFERRABLE INITIALLY DEFERRED, "api_attempts" integer unsigned NOT NULL CHECK ("api_attempts" >= 0), "api_refusal" text NOT NULL, "api_retry_at" datetime NULL, "api_status" varchar(10) NOT NULL, "job" varchar(253) NOT NULL, "queue" varchar(253) NOT NULL, "quota_group" varchar(253) NOT NULL, "removed_job_id" bigint NULL REFERENCES "scheduling_removedjob" ("id") DEFERRABLE INITIALLY DEFERRED);
CREATE TABLE "scheduling_jobrecord" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "namespace" varchar(63) NOT NULL, "name" varchar(253) NOT NULL, "queue" varchar(253) NOT NULL, "quota_group" varchar(253) NOT NULL, "priority" integer NOT NULL, "preemptible" bool NOT NULL, "min_member" integer unsigned NOT NULL CHECK ("min_member" >= 0), "roles" text NOT NULL CHECK ((JSON_VALID("roles") OR "roles" IS NULL)), "min_resources" text NULL CHECK ((JSON_VALID("min_resources") OR "min_resources" IS NULL)), "submitted" datetime NOT NULL, "started" datetime NULL, "finished" datetime NULL, "runtime" real NULL, "pod_runtimes" text NULL CHECK ((JSON_VALID("pod_runtimes") OR "pod_runtimes" IS NULL)), "evictions" integer unsigned NOT NULL CHECK ("evictions" >= 0), "cluster_id" bigint NOT NULL REFERENCES "scheduling_cluster" ("id") DEFERRABLE INITIALLY DEFERRED);
CREATE TABLE "scheduling_kubeobjectproblem" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "kind" varchar(63) NOT NULL, "namespace" varchar(63) NOT NULL, "name" varchar(253) NOT NULL, "message" text NOT NULL, "resource_version" varchar(63) NOT NULL, "first_seen" datetime NOT NULL, "last_seen" datetime NOT NULL, "event_sent" bool NOT NULL, "cluster_id" bigint NOT NULL REFERENCES "scheduling_cluster" ("id") DEFERRABLE INITIALLY DEFERRED, "reason" varchar(63) NOT NULL, CONSTRAINT "kube_problem_unique" UNIQUE ("cluster_id", "kind", "namespace", "name"));
CREATE TABLE "scheduling_node" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "name" varchar(253) NOT NULL, "allocatable" text NOT NULL CHECK ((JSON_VALID("allocatable") OR "allocatable" IS NULL)), "labels" text NOT NULL CHECK ((JSON_VALID("labels") OR "labels" IS NULL)), "taints" text NOT NULL CHECK ((JSON_VALID("taints") OR "taints" IS NULL)), "unschedulable" bool NOT NULL, "ready" bool NOT NULL, "last_heartbeat" datetime NULL, "created" datetime NOT NULL, "updated" datetime NOT NULL, "cluster_id" bigint NOT NULL REFERENCES "scheduling_cluster" ("id") DEFERRABLE INITIALLY DEFERRED, "pool" varchar(63) NOT NULL, "not_ready_since" datetime NULL, "set_aside" text NULL, CONSTRAINT "node_unique_name_per_cluster" UNIQUE ("cluster_id", "name"));
CREATE TABLE "scheduling_nodeagentbinding" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "node" varchar(253) NOT NULL, "pool" varchar(63) NOT NULL, "created" datetime NOT NULL, "cluster_id" bigint NOT NULL REFERENCES "scheduling_cluster" ("id") DEFERRABLE INITIALLY DEFERRED, "user_id" integer NOT NULL REFERENCES "auth_user" ("id") DEFERRABLE INITIALLY DEFERRED, CONSTRAINT "node_agent_binding_node_xor_pool" CHECK ((("node" = '' AND NOT ("pool" = '')) OR (NOT ("node" = '') AND "pool" = ''))), CONSTRAINT "node_agent_binding_unique" UNIQUE ("user_id", "cluster_id", "node", "pool"));
CREATE TABLE "scheduling_pod" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "name" varchar(253) NOT NULL, "task_name" varchar(63) NOT NULL, "request" text NOT NULL CHECK ((JSON_VALID("request") OR "request" IS NULL)), "priority" integer NOT NULL, "preemptible" bool NOT NULL, "status" varchar(10) NOT NULL, "node_selector" text NOT NULL CHECK ((JSON_VALID("node_selector") OR "node_selector" IS NULL)), "tolerations" text NOT NULL CHECK ((JSON_VALID("tolerations") OR "tolerations" IS NULL)), "labels" text NOT NULL CHECK ((JSON_VALID("labels") OR "labels" IS NULL)), "duration_seconds" integer unsigned NULL CHECK ("duration_seconds" >= 0), "created" datetime NOT NULL, "started" datetime NULL, "finished" datetime NULL, "updated" datetime NOT NULL, "cluster_id" bigint NOT NULL REFERENCES "scheduling_cluster" ("id") DEFERRABLE INITIALLY DEFERRED, "namespace_id" bigint NOT NULL REFERENCES "quotas_namespace" ("id") DEFERRABLE INITIALLY DEFERRED, "node_id" bigint NULL, "podgroup_id" bigint NULL REFERENCES "scheduling_podgroup" ("id") DEFERRABLE INITIALLY DEFERRED, "message" text NOT NULL, "reason" varchar(63) NOT NULL, "quota_group_id" bigint NULL REFERENCES "quotas_quotagroup" ("id") DEFERRABLE INITIALLY DEFERRED, CONSTRAINT "pod_unique_name" UNIQUE ("cluster_id", "namespace_id", "name"));
CREATE TABLE "scheduling_podgroup" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "name" varchar(253) NOT NULL, "min_member" integer unsigned NOT NULL CHECK ("min_member" >= 0), "min_task_member" text NOT NULL CHECK ((JSON_VALID("min_task_member") OR "min_task_member" IS NULL)), "min_resources" text NULL CHECK ((JSON_VALID("min_resources") OR "min_resources" IS NULL)), "priority" integer NOT NULL, "priority_class_name" varchar(253) NOT NULL, "phase" varchar(10) NOT NULL, "conditions" text NOT NULL CHECK ((JSON_VALID("conditions") OR "conditions" IS NULL)), "created" datetime NOT NULL, "updated" datetime NOT NULL, "cluster_id" bigint NOT NULL REFERENCES "scheduling_cluster" ("id") DEFERRABLE INITIALLY DEFERRED, "namespace_id" bigint NOT NULL REFERENCES "quotas_namespace" ("id") DEFERRABLE INITIALLY DEFERRED, "queue_id" bigint NOT NULL REFERENCES "quotas_queue" ("id") DEFERRABLE INITIALLY DEFERRED, "blocker" text NULL CHECK ((JSON_VALID("blocker") OR "blocker" IS NULL)), "message" text NOT NULL, "reason" varchar(63) NOT NULL, "backoff_until" datetime NULL, "requeues" integer unsigned NOT NULL CHECK ("requeues" >= 0), "unplaced_sessions" integer unsigned NOT NULL CHECK ("unplaced_sessions" >= 0), "gang_releases" integer unsigned NOT NULL CHECK ("gang_releases" >= 0), "idle_gpu_seconds" bigint unsigned NOT NULL CHECK ("idle_gpu_seconds" >= 0), "release_reason" text NOT NULL, "released_at" datetime NULL, "deletion_requested_at" datetime NULL, "deletion_requested_by" varchar(150) NULL, "kube_owner" varchar(400) NULL, "suspended_at" datetime NULL, "suspended_by" varchar(150) NULL, CONSTRAINT "podgroup_unique_name" UNIQUE ("cluster_id", "namespace_id", "name"));
CREATE TABLE "scheduling_podgroupreason" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "time" datetime NOT NULL, "phase" varchar(10) NOT NULL, "reason" varchar(63) NOT NULL, "message" text NOT NULL, "blocker" text NULL CHECK ((JSON_VALID("blocker") OR "blocker" IS NULL)), "podgroup_id" bigint NOT NULL REFERENCES "scheduling_podgroup" ("id") DEFERRABLE INITIALLY DEFERRED, "session_id" bigint NULL REFERENCES "scheduling_schedulingsession" ("id") DEFERRABLE INITIALLY DEFERRED);
CREATE TABLE "scheduling_quotaoverstate" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "name" varchar(253) NOT NULL, "over_since" datetime NOT NULL, "cluster_id" bigint NOT NULL REFERENCES "scheduling_cluster" ("id") DEFERRABLE INITIALLY DEFERRED, CONSTRAINT "quota_over_state_unique" UNIQUE ("cluster_id", "name"));
CREATE TABLE "scheduling_quotasample" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "time" datetime NOT NULL, "kind" varchar(5) NOT NULL, "name" varchar(253) NOT NULL, "request" text NOT NULL CHECK ((JSON_VALID("request") OR "request" IS NULL)), "allocated" text NOT NULL CHECK ((JSON_VALID("allocated") OR "allocated" IS NULL)), "deserved" text NOT NULL CHECK ((JSON_VALID("deserved") OR "deserved" IS NULL)), "borrowed" text NOT NULL CHECK ((JSON_VALID("borrowed") OR "borrowed" IS NULL)), "lent" text NOT NULL CHECK ((JSON_VALID("lent") OR "lent" IS NULL)), "cluster_id" bigint NOT NULL REFERENCES "scheduling_cluster" ("id") DEFERRABLE INITIALLY DEFERRED);
CREATE TABLE "scheduling_removedjob" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "namespace" varchar(63) NOT NULL, "name" varchar(253) NOT NULL, "queue" varchar(253) NOT NULL, "quota_groups" text NOT NULL CHECK ((JSON_VALID("quota_groups") OR "quota_groups" IS NULL)), "phase" varchar(10) NOT NULL, "submitted" datetime NOT NULL, "finished" datetime NULL, "removed_at" datetime NOT NULL, "cause" varchar(20) NOT NULL, "reason" text NOT NULL, "cluster_id" bigint NOT NULL REFERENCES "scheduling_cluster" ("id") DEFERRABLE INITIALLY DEFERRED);
CREATE TABLE "scheduling_rowchange" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "cluster_id" bigint NOT NULL, "rev" bigint NOT NULL, "kind" smallint NOT NULL, "row_id" bigint NOT NULL);
CREATE TABLE "scheduling_schedulingsession" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "kind" varchar(8) NOT NULL, "status" varchar(8) NOT NULL, "started" datetime NOT NULL, "finished" datetime NULL, "duration_ms" real NOT NULL, "timings" text NOT NULL CHECK ((JSON_VALID("timings") OR "timings" IS NULL)), "bound" integer unsigned NOT NULL CHECK ("bound" >= 0), "pipelined" integer unsigned NOT NULL CHECK ("pipelined" >= 0), "evicted" integer unsigned NOT NULL CHECK ("evicted" >= 0), "podgroups" text NOT NULL CHECK ((JSON_VALID("podgroups") OR "podgroups" IS NULL)), "pending_pods" integer unsigned NOT NULL CHECK ("pending_pods" >= 0), "warnings" text NOT NULL CHECK ((JSON_VALID("warnings") OR "warnings" IS NULL)), "error" text NOT NULL, "bindings" text NOT NULL CHECK ((JSON_VALID("bindings") OR "bindings" IS NULL)), "cluster_id" bigint NOT NULL REFERENCES "scheduling_cluster" ("id") DEFERRABLE INITIALLY DEFERRED);
CREATE TABLE "scheduling_usagehistory" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "updated" datetime NOT NULL, "nodes" text NOT NULL CHECK ((JSON_VALID("nodes") OR "nodes" IS NULL)), "cluster_id" bigint NOT NULL UNIQUE REFERENCES "scheduling_cluster" ("id") DEFERRABLE INITIALLY DEFERRED);
CREATE TABLE "security_apitoken" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "name" varchar(100) NOT NULL, "prefix" varchar(12) NOT NULL, "digest" varchar(64) NOT NULL UNIQUE, "read_only" bool NOT NULL, "created" datetime NOT NULL, "expires" datetime NOT NULL, "last_used" datetime NULL, "user_id" integer NOT NULL REFERENCES "auth_user" ("id") DEFERRABLE INITIALLY DEFERRED);
CREATE TABLE "security_securityevent" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "time" datetime NOT NULL, "actor" varchar(150) NOT NULL, "remote_address" varchar(64) NOT NULL, "kind" varchar(32) NOT NULL, "target" varchar(255) NOT NULL, "outcome" varchar(16) NOT NULL, "detail" text NOT NULL);
CREATE INDEX "auth_group_permissions_group_id_b120cbf9" ON "auth_group_permissions" ("group_id");
CREATE UNIQUE INDEX "auth_group_permissions_group_id_permission_id_0cd325b0_uniq" ON "auth_group_permissions" ("group_id", "permission_id");
CREATE INDEX "auth_group_permissions_permission_id_84c5c92e" ON "auth_group_permissions" ("permission_id");
CREATE INDEX "auth_permission_content_type_id_2f476e4b" ON "auth_permission" ("content_type_id");
CREATE UNIQUE INDEX "auth_permission_content_type_id_codename_01ab375a_uniq" ON "auth_permission" ("content_type_id", "codename");
CREATE INDEX "auth_user_groups_group_id_97559544" ON "auth_user_groups" ("group_id");
CREATE INDEX "auth_user_groups_user_id_6a12ed8b" ON "auth_user_groups" ("user_id");
CREATE UNIQUE INDEX "auth_user_groups_user_id_group_id_94350c0c_uniq" ON "auth_user_groups" ("user_id", "group_id");
CREATE INDEX "auth_user_user_permissions_permission_id_1fbb5f2c" ON "auth_user_user_permissions" ("permission_id");
CREATE INDEX "auth_user_user_permissions_user_id_a95ead1b" ON "auth_user_user_permissions" ("user_id");
CREATE UNIQUE INDEX "auth_user_user_permissions_user_id_permission_id_14a6b632_uniq" ON "auth_user_user_permissions" ("user_id", "permission_id");
CREATE INDEX "axes_accessattempt_ip_address_10922d9c" ON "axes_accessattempt" ("ip_address");
CREATE INDEX "axes_accessattempt_user_agent_ad89678b" ON "axes_accessattempt" ("user_agent");
CREATE INDEX "axes_accessattempt_username_3f2d4ca0" ON "axes_accessattempt" ("username");
CREATE UNIQUE INDEX "axes_accessattempt_username_ip_address_user_agent_8ea22282_uniq" ON "axes_accessattempt" ("username", "ip_address", "user_agent");
CREATE INDEX "axes_accessfailurelog_ip_address_2e9f5a7f" ON "axes_accessfailurelog" ("ip_address");
CREATE INDEX "axes_accessfailurelog_user_agent_ea145dda" ON "axes_accessfailurelog" ("user_agent");
CREATE INDEX "axes_accessfailurelog_username_a8b7e8a4" ON "axes_accessfailurelog" ("username");
CREATE INDEX "axes_accesslog_ip_address_86b417e5" ON "axes_accesslog" ("ip_address");
CREATE INDEX "axes_accesslog_user_agent_0e659004" ON "axes_accesslog" ("user_agent");
CREATE INDEX "axes_accesslog_username_df93064b" ON "axes_accesslog" ("username");
CREATE INDEX "changereque_status_6330e4_idx" ON "changerequests_changerequest" ("status", "created" DESC);
CREATE INDEX "changerequests_changerequest_requester_id_b6708ae4" ON "changerequests_changerequest" ("requester_id");
CREATE INDEX "changerequests_changerequest_reviewer_id_6d6b35fd" ON "changerequests_changerequest" ("reviewer_id");
CREATE INDEX "changerequests_historicalchangerequest_history_date_b54fd7ae" ON "changerequests_historicalchangerequest" ("history_date");
CREATE INDEX "changerequests_historicalchangerequest_history_user_id_2477d9c9" ON "changerequests_historicalchangerequest" ("history_user_id");
CREATE INDEX "changerequests_historicalchangerequest_id_d153889a" ON "changerequests_historicalchangerequest" ("id");
CREATE INDEX "changerequests_historicalchangerequest_requester_id_63a817d3" ON "changerequests_historicalchangerequest" ("requester_id");
CREATE INDEX "changerequests_historicalchangerequest_reviewer_id_95a0cc87" ON "changerequests_historicalchangerequest" ("reviewer_id");
CREATE INDEX "django_admin_log_content_type_id_c4bce8eb" ON "django_admin_log" ("content_type_id");
CREATE INDEX "django_admin_log_user_id_c564eba6" ON "django_admin_log" ("user_id");
CREATE INDEX "django_celery_beat_periodictask_clocked_id_47a69f82" ON "django_celery_beat_periodictask" ("clocked_id");
CREATE INDEX "django_celery_beat_periodictask_crontab_id_d3cba168" ON "django_celery_beat_periodictask" ("crontab_id");
CREATE INDEX "django_celery_beat_periodictask_interval_id_a8ca27da" ON "django_celery_beat_periodictask" ("interval_id");
CREATE INDEX "django_celery_beat_periodictask_solar_id_a87ce72c" ON "django_celery_beat_periodictask" ("solar_id");
CREATE UNIQUE INDEX "django_celery_beat_solarschedule_event_latitude_longitude_ba64999a_uniq" ON "django_celery_beat_solarschedule" ("event", "latitude", "longitude");
CREATE UNIQUE INDEX "django_content_type_app_label_model_76bd3d3b_uniq" ON "django_content_type" ("app_label", "model");
CREATE INDEX "django_session_expire_date_a5c62663" ON "django_session" ("expire_date");
CREATE INDEX "quotas_historicalnamespace_default_queue_id_ec6f38a7" ON "quotas_historicalnamespace" ("default_queue_id");
CREATE INDEX "quotas_historicalnamespace_history_date_9d83a265" ON "quotas_historicalnamespace" ("history_date");
CREATE INDEX "quotas_historicalnamespace_history_user_id_edd95bd5" ON "quotas_historicalnamespace" ("history_user_id");
CREATE INDEX "quotas_historicalnamespace_id_f5eb5e4c" ON "quotas_historicalnamespace" ("id");
CREATE INDEX "quotas_historicalnamespace_name_7af2dce0" ON "quotas_historicalnamespace" ("name");
CREATE INDEX "quotas_historicalnamespace_quota_group_id_05a24466" ON "quotas_historicalnamespace" ("quota_group_id");
CREATE INDEX "quotas_historicalqueue_history_date_10c05a5e" ON "quotas_historicalqueue" ("history_date");
CREATE INDEX "quotas_historicalqueue_history_user_id_ce296e99" ON "quotas_historicalqueue" ("history_user_id");
CREATE INDEX "quotas_historicalqueue_id_caa6b6a5" ON "quotas_historicalqueue" ("id");
CREATE INDEX "quotas_historicalqueue_name_e6b096f8" ON "quotas_historicalqueue" ("name");
CREATE INDEX "quotas_historicalqueue_parent_id_53bd026d" ON "quotas_historicalqueue" ("parent_id");
CREATE INDEX "quotas_historicalqueue_teams_group_id_5a53eadb" ON "quotas_historicalqueue_teams" ("group_id");
CREATE INDEX "quotas_historicalqueue_teams_history_id_88e4f40a" ON "quotas_historicalqueue_teams" ("history_id");
CREATE INDEX "quotas_historicalqueue_teams_id_501a83fa" ON "quotas_historicalqueue_teams" ("id");
CREATE INDEX "quotas_historicalqueue_teams_queue_id_364eff66" ON "quotas_historicalqueue_teams" ("queue_id");
CREATE INDEX "quotas_historicalquotagroup_history_date_f6da00ea" ON "quotas_historicalquotagroup" ("history_date");
CREATE INDEX "quotas_historicalquotagroup_history_user_id_9caf3248" ON "quotas_historicalquotagroup" ("history_user_id");
CREATE INDEX "quotas_historicalquotagroup_id_208934b3" ON "quotas_historicalquotagroup" ("id");
CREATE INDEX "quotas_historicalquotagroup_name_55f9d5cf" ON "quotas_historicalquotagroup" ("name");
CREATE INDEX "quotas_historicalquotagroup_parent_id_4e02eab7" ON "quotas_historicalquotagroup" ("parent_id");
CREATE INDEX "quotas_historicalquotagroup_teams_group_id_086ba196" ON "quotas_historicalquotagroup_teams" ("group_id");
CREATE INDEX "quotas_historicalquotagroup_teams_history_id_0fd1a825" ON "quotas_historicalquotagroup_teams" ("history_id");
CREATE INDEX "quotas_historicalquotagroup_teams_id_3c022e8e" ON "quotas_historicalquotagroup_teams" ("id");
CREATE INDEX "quotas_historicalquotagroup_teams_quotagroup_id_ed8824a6" ON "quotas_historicalquotagroup_teams" ("quotagroup_id");
CREATE INDEX "quotas_namespace_default_queue_id_80357e4f" ON "quotas_namespace" ("default_queue_id");
CREATE INDEX "quotas_namespace_quota_group_id_38c12256" ON "quotas_namespace" ("quota_group_id");
CREATE INDEX "quotas_queue_parent_id_6c08ef00" ON "quotas_queue" ("parent_id");
CREATE INDEX "quotas_queue_teams_group_id_f32263c3" ON "quotas_queue_teams" ("group_id");
CREATE INDEX "quotas_queue_teams_queue_id_7edba7f6" ON "quotas_queue_teams" ("queue_id");
CREATE UNIQUE INDEX "quotas_queue_teams_queue_id_group_id_75606218_uniq" ON "quotas_queue_teams" ("queue_id", "group_id");
CREATE INDEX "quotas_quotagroup_parent_id_c45ce798" ON "quotas_quotagroup" ("parent_id");
CREATE INDEX "quotas_quotagroup_teams_group_id_70fb5d2c" ON "quotas_quotagroup_teams" ("group_id");
CREATE INDEX "quotas_quotagroup_teams_quotagroup_id_cfb14f14" ON "quotas_quotagroup_teams" ("quotagroup_id");
CREATE UNIQUE INDEX "quotas_quotagroup_teams_quotagroup_id_group_id_3c795c24_uniq" ON "quotas_quotagroup_teams" ("quotagroup_id", "group_id");
CREATE INDEX "rowchange_cluster_rev" ON "scheduling_rowchange" ("cluster_id", "rev");
CREATE INDEX "scheduling__cluster_001685_idx" ON "scheduling_jobrecord" ("cluster_id", "submitted");
CREATE INDEX "scheduling__cluster_0939e7_idx" ON "scheduling_quotasample" ("cluster_id", "kind", "name", "time");
CREATE INDEX "scheduling__cluster_0e5754_idx" ON "scheduling_removedjob" ("cluster_id", "removed_at");
CREATE INDEX "scheduling__cluster_782efb_idx" ON "scheduling_schedulingsession" ("cluster_id", "started");
CREATE INDEX "scheduling__cluster_d42305_idx" ON "scheduling_eviction" ("cluster_id", "created");
CREATE INDEX "scheduling__cluster_d86d23_idx" ON "scheduling_removedjob" ("cluster_id", "namespace", "name", "removed_at");
CREATE INDEX "scheduling__node_id_74749c_idx" ON "scheduling_pod" ("node_id", "status");
CREATE INDEX "scheduling__podgrou_21e5f4_idx" ON "scheduling_podgroupreason" ("podgroup_id", "time");
CREATE INDEX "scheduling__queue_8dcd59_idx" ON "scheduling_eviction" ("queue", "created");
CREATE INDEX "scheduling__queue_i_f85c36_idx" ON "scheduling_podgroup" ("queue_id", "phase");
CREATE INDEX "scheduling__quota_g_034142_idx" ON "scheduling_eviction" ("quota_group", "created");
CREATE INDEX "scheduling__status_8f7e15_idx" ON "scheduling_schedulingsession" ("status", "started");
CREATE INDEX "scheduling__status_dbe857_idx" ON "scheduling_pod" ("status");
CREATE INDEX "scheduling__time_97e6a0_idx" ON "scheduling_quotasample" ("time");
CREATE INDEX "scheduling_clusterlease_cluster_id_e96060cb" ON "scheduling_clusterlease" ("cluster_id");
CREATE INDEX "scheduling_eviction_cluster_id_4a22d7fd" ON "scheduling_eviction" ("cluster_id");
CREATE INDEX "scheduling_eviction_pod_id_5d156d13" ON "scheduling_eviction" ("pod_id");
CREATE INDEX "scheduling_eviction_removed_job_id_5dab40be" ON "scheduling_eviction" ("removed_job_id");
CREATE INDEX "scheduling_eviction_session_id_5a05da69" ON "scheduling_eviction" ("session_id");
CREATE INDEX "scheduling_jobrecord_cluster_id_ee55630d" ON "scheduling_jobrecord" ("cluster_id");
CREATE INDEX "scheduling_kubeobjectproblem_cluster_id_a7ed0739" ON "scheduling_kubeobjectproblem" ("cluster_id");
CREATE INDEX "scheduling_node_cluster_id_bee1a5e7" ON "scheduling_node" ("cluster_id");
CREATE INDEX "scheduling_node_pool_f5bb9c7f" ON "scheduling_node" ("pool");
CREATE INDEX "scheduling_nodeagentbinding_cluster_id_8abf5ffc" ON "scheduling_nodeagentbinding" ("cluster_id");
CREATE INDEX "scheduling_nodeagentbinding_user_id_4dcc88bd" ON "scheduling_nodeagentbinding" ("user_id");
CREATE INDEX "scheduling_pod_podgroup_id_acf05674" ON "scheduling_pod" ("podgroup_id");
CREATE INDEX "scheduling_podgroup_cluster_id_8d3f819e" ON "scheduling_podgroup" ("cluster_id");
CREATE INDEX "scheduling_podgroup_namespace_id_92c8c32e" ON "scheduling_podgroup" ("namespace_id");
CREATE INDEX "scheduling_podgroup_queue_id_0d5d662b" ON "scheduling_podgroup" ("queue_id");
CREATE INDEX "scheduling_podgroupreason_podgroup_id_cbe06a8e" ON "scheduling_podgroupreason" ("podgroup_id");
CREATE INDEX "scheduling_podgroupreason_session_id_157ab281" ON "scheduling_podgroupreason" ("session_id");
CREATE INDEX "scheduling_quotaoverstate_cluster_id_ba5302c3" ON "scheduling_quotaoverstate" ("cluster_id");
CREATE INDEX "scheduling_quotasample_cluster_id_c4ab22ce" ON "scheduling_quotasample" ("cluster_id");
CREATE INDEX "scheduling_removedjob_cluster_id_063d46a8" ON "scheduling_removedjob" ("cluster_id");
CREATE INDEX "scheduling_schedulingsession_cluster_id_53fbe80c" ON "scheduling_schedulingsession" ("cluster_id");
CREATE INDEX "security_apitoken_prefix_fd0e2e40" ON "security_apitoken" ("prefix");
CREATE INDEX "security_apitoken_user_id_18651329" ON "security_apitoken" ("user_id");
CREATE INDEX "security_event_kind_time" ON "security_securityevent" ("kind", "time" DESC);
CREATE INDEX "security_securityevent_actor_2a3503af" ON "security_securityevent" ("actor");
CREATE INDEX "security_securityevent_kind_1d7bca1f" ON "security_securityevent" ("kind");
CREATE INDEX "security_securityevent_time_8d63e33b" ON "security_securityevent" ("time");
CREATE TRIGGER fairway_feed_scheduling_node_delete AFTER DELETE ON scheduling_node FOR EACH ROW
BEGIN
    INSERT INTO quotas_revision (key, value) VALUES ('cluster-' || OLD.cluster_id, 1)
        ON CONFLICT (key) DO UPDATE SET value = value + 1;
    INSERT INTO scheduling_rowchange (cluster_id, rev, kind, row_id)
        SELECT OLD.cluster_id, value, 1, OLD.id FROM quotas_revision WHERE key = 'cluster-' || OLD.cluster_id;
END;
CREATE TRIGGER fairway_feed_scheduling_node_insert AFTER INSERT ON scheduling_node FOR EACH ROW
BEGIN
    INSERT INTO quotas_revision (key, value) VALUES ('cluster-' || NEW.cluster_id, 1)
        ON CONFLICT (key) DO UPDATE SET value = value + 1;
    INSERT INTO scheduling_rowchange (cluster_id, rev, kind, row_id)
        SELECT NEW.cluster_id, value, 1, NEW.id FROM quotas_revision WHERE key = 'cluster-' || NEW.cluster_id;
END;
CREATE TRIGGER fairway_feed_scheduling_node_update AFTER UPDATE ON scheduling_node FOR EACH ROW WHEN OLD.cluster_id IS NOT NEW.cluster_id OR OLD.name IS NOT NEW.name OR OLD.allocatable IS NOT NEW.allocatable OR OLD.labels IS NOT NEW.labels OR OLD.taints IS NOT NEW.taints OR OLD.unschedulable IS NOT NEW.unschedulable OR OLD.ready IS NOT NEW.ready
BEGIN
    INSERT INTO quotas_revision (key, value) VALUES ('cluster-' || NEW.cluster_id, 1)
        ON CONFLICT (key) DO UPDATE SET value = value + 1;
    INSERT INTO scheduling_rowchange (cluster_id, rev, kind, row_id)
        SELECT NEW.cluster_id, value, 1, NEW.id FROM quotas_revision WHERE key = 'cluster-' || NEW.cluster_id;
END;
CREATE TRIGGER fairway_feed_scheduling_pod_delete AFTER DELETE ON scheduling_pod FOR EACH ROW
BEGIN
    INSERT INTO quotas_revision (key, value) VALUES ('cluster-' || OLD.cluster_id, 1)
        ON CONFLICT (key) DO UPDATE SET value = value + 1;
    INSERT INTO scheduling_rowchange (cluster_id, rev, kind, row_id)
        SELECT OLD.cluster_id, value, 3, OLD.id FROM quotas_revision WHERE key = 'cluster-' || OLD.cluster_id;
END;
CREATE TRIGGER fairway_feed_scheduling_pod_insert AFTER INSERT ON scheduling_pod FOR EACH ROW
BEGIN
    INSERT INTO quotas_revision (key, value) VALUES ('cluster-' || NEW.cluster_id, 1)
        ON CONFLICT (key) DO UPDATE SET value = value + 1;
    INSERT INTO scheduling_rowchange (cluster_id, rev, kind, row_id)
        SELECT NEW.cluster_id, value, 3, NEW.id FROM quotas_revision WHERE key = 'cluster-' || NEW.cluster_id;
END;
CREATE TRIGGER fairway_feed_scheduling_pod_update AFTER UPDATE ON scheduling_pod FOR EACH ROW WHEN OLD.cluster_id IS NOT NEW.cluster_id OR OLD.namespace_id IS NOT NEW.namespace_id OR OLD.name IS NOT NEW.name OR OLD.podgroup_id IS NOT NEW.podgroup_id OR OLD.task_name IS NOT NEW.task_name OR OLD.request IS NOT NEW.request OR OLD.priority IS NOT NEW.priority OR OLD.preemptible IS NOT NEW.preemptible OR OLD.quota_group_id IS NOT NEW.quota_group_id OR OLD.status IS NOT NEW.status OR OLD.node_id IS NOT NEW.node_id OR OLD.node_selector IS NOT NEW.node_selector OR OLD.tolerations IS NOT NEW.tolerations OR OLD.labels IS NOT NEW.labels OR OLD.created IS NOT NEW.created OR OLD.started IS NOT NEW.started
BEGIN
    INSERT INTO quotas_revision (key, value) VALUES ('cluster-' || NEW.cluster_id, 1)
        ON CONFLICT (key) DO UPDATE SET value = value + 1;
    INSERT INTO scheduling_rowchange (cluster_id, rev, kind, row_id)
        SELECT NEW.cluster_id, value, 3, NEW.id FROM quotas_revision WHERE key = 'cluster-' || NEW.cluster_id;
END;
CREATE TRIGGER fairway_feed_scheduling_podgroup_delete AFTER DELETE ON scheduling_podgroup FOR EACH ROW
BEGIN
    INSERT INTO quotas_revision (key, value) VALUES ('cluster-' || OLD.cluster_id, 1)
        ON CONFLICT (key) DO UPDATE SET value = value + 1;
    INSERT INTO scheduling_rowchange (cluster_id, rev, kind, row_id)
        SELECT OLD.cluster_id, value, 2, OLD.id FROM quotas_revision WHERE key = 'cluster-' || OLD.cluster_id;
END;
CREATE TRIGGER fairway_feed_scheduling_podgroup_insert AFTER INSERT ON scheduling_podgroup FOR EACH ROW
BEGIN
    INSERT INTO quotas_revision (key, value) VALUES ('cluster-' || NEW.cluster_id, 1)
        ON CONFLICT (key) DO UPDATE SET value = value + 1;
    INSERT INTO scheduling_rowchange (cluster_id, rev, kind, row_id)
        SELECT NEW.cluster_id, value, 2, NEW.id FROM quotas_revision WHERE key = 'cluster-' || NEW.cluster_id;
END;
CREATE TRIGGER fairway_feed_scheduling_podgroup_update AFTER UPDATE ON scheduling_podgroup FOR EACH ROW WHEN OLD.cluster_id IS NOT NEW.cluster_id OR OLD.namespace_id IS NOT NEW.namespace_id OR OLD.name IS NOT NEW.name OR OLD.queue_id IS NOT NEW.queue_id OR OLD.min_member IS NOT NEW.min_member OR OLD.min_task_member IS NOT NEW.min_task_member OR OLD.min_resources IS NOT NEW.min_resources OR OLD.priority IS NOT NEW.priority OR OLD.priority_class_name IS NOT NEW.priority_class_name OR OLD.phase IS NOT NEW.phase OR OLD.created IS NOT NEW.created OR OLD.conditions IS NOT NEW.conditions OR OLD.unplaced_sessions IS NOT NEW.unplaced_sessions OR OLD.requeues IS NOT NEW.requeues OR OLD.backoff_until IS NOT NEW.backoff_until OR OLD.reason IS NOT NEW.reason OR OLD.message IS NOT NEW.message OR OLD.blocker IS NOT NEW.blocker OR OLD.suspended_at IS NOT NEW.suspended_at
BEGIN
    INSERT INTO quotas_revision (key, value) VALUES ('cluster-' || NEW.cluster_id, 1)
        ON CONFLICT (key) DO UPDATE SET value = value + 1;
    INSERT INTO scheduling_rowchange (cluster_id, rev, kind, row_id)
        SELECT NEW.cluster_id, value, 2, NEW.id FROM quotas_revision WHERE key = 'cluster-' || NEW.cluster_id;
END;
INSERT INTO django_migrations (id, app, name, applied) VALUES (1, 'contenttypes', '0001_initial', '2026-11-29 14:05:48.355128');
INSERT INTO django_migrations (id, app, name, applied) VALUES (2, 'auth', '0001_initial', '2026-11-29 14:05:48.377580');
INSERT INTO django_migrations (id, app, name, applied) VALUES (3, 'admin', '0001_initial', '2026-11-29 14:05:48.390653');
INSERT INTO django_migrations (id, app, name, applied) VALUES (4, 'admin', '0002_logentry_remove_auto_add', '2026-11-29 14:05:48.397017');
INSERT INTO django_migrations (id, app, name, applied) VALUES (5, 'admin', '0003_logentry_add_action_flag_choices', '2026-11-29 14:05:48.404639');
INSERT INTO django_migrations (id, app, name, applied) VALUES (6, 'contenttypes', '0002_remove_content_type_name', '2026-11-29 14:05:48.449900');
INSERT INTO django_migrations (id, app, name, applied) VALUES (7, 'auth', '0002_alter_permission_name_max_length', '2026-11-29 14:05:48.484024');
INSERT INTO django_migrations (id, app, name, applied) VALUES (8, 'auth', '0003_alter_user_email_max_length', '2026-11-29 14:05:48.491450');
INSERT INTO django_migrations (id, app, name, applied) VALUES (9, 'auth', '0004_alter_user_username_opts', '2026-11-29 14:05:48.495827');
INSERT INTO django_migrations (id, app, name, applied) VALUES (10, 'auth', '0005_alter_user_last_login_null', '2026-11-29 14:05:48.518445');
INSERT INTO django_migrations (id, app, name, applied) VALUES (11, 'auth', '0006_require_contenttypes_0002', '2026-11-29 14:05:48.526244');
INSERT INTO django_migrations (id, app, name, applied) VALUES (12, 'auth', '0007_alter_validators_add_error_messages', '2026-11-29 14:05:48.548700');
INSERT INTO django_migrations (id, app, name, applied) VALUES (13, 'auth', '0008_alter_user_username_max_length', '2026-11-29 14:05:48.560888');
INSERT INTO django_migrations (id, app, name, applied) VALUES (14, 'auth', '0009_alter_user_last_name_max_length', '2026-11-29 14:05:48.566557');
INSERT INTO django_migrations (id, app, name, applied) VALUES (15, 'auth', '0010_alter_group_name_max_length', '2026-11-29 14:05:48.579790');
INSERT INTO django_migrations (id, app, name, applied) VALUES (16, 'auth', '0011_update_proxy_permissions', '2026-11-29 14:05:48.612197');
INSERT INTO django_migrations (id, app, name, applied) VALUES (17, 'auth', '0012_alter_user_first_name_max_length', '2026-11-29 14:05:49.124833');
INSERT INTO django_migrations (id, app, name, applied) VALUES (18, 'axes', '0001_initial', '2026-11-29 14:05:49.147191');
INSERT INTO django_migrations (id, app, name, applied) VALUES (19, 'axes', '0002_auto_20151217_2044', '2026-11-29 14:05:49.210082');
INSERT INTO django_migrations (id, app, name, applied) VALUES (20, 'axes', '0003_auto_20160322_0929', '2026-11-29 14:05:49.227472');
INSERT INTO django_migrations (id, app, name, applied) VALUES (21, 'axes', '0004_auto_20181024_1538', '2026-11-29 14:05:49.259953');
INSERT INTO django_migrations (id, app, name, applied) VALUES (22, 'axes', '0005_remove_accessattempt_trusted', '2026-11-29 14:05:49.269961');
INSERT INTO django_migrations (id, app, name, applied) VALUES (23, 'axes', '0006_remove_accesslog_trusted', '2026-11-29 14:05:49.323106');
INSERT INTO django_migrations (id, app, name, applied) VALUES (24, 'axes', '0007_alter_accessattempt_unique_together', '2026-11-29 14:05:49.332642');
INSERT INTO django_migrations (id, app, name, applied) VALUES (25, 'axes', '0008_accessfailurelog', '2026-11-29 14:05:49.344184');
INSERT INTO django_migrations (id, app, name, applied) VALUES (26, 'axes', '0009_add_session_hash', '2026-11-29 14:05:49.352146');
INSERT INTO django_migrations (id, app, name, applied) VALUES (27, 'axes', '0010_accessattemptexpiration', '2026-11-29 14:05:49.354174');
INSERT INTO django_migrations (id, app, name, applied) VALUES (28, 'changerequests', '0001_change_requests', '2026-11-29 14:05:49.473231');
INSERT INTO django_migrations (id, app, name, applied) VALUES (29, 'django_celery_beat', '0001_initial', '2026-11-29 14:05:49.478032');
INSERT INTO django_migrations (id, app, name, applied) VALUES (30, 'django_celery_beat', '0002_auto_20161118_0346', '2026-11-29 14:05:49.484159');
INSERT INTO django_migrations (id, app, name, applied) VALUES (31, 'django_celery_beat', '0003_auto_20161209_0049', '2026-11-29 14:05:49.487406');
INSERT INTO django_migrations (id, app, name, applied) VALUES (32, 'django_celery_beat', '0004_auto_20170221_0000', '2026-11-29 14:05:49.489325');
INSERT INTO django_migrations (id, app, name, applied) VALUES (33, 'django_celery_beat', '0005_add_solarschedule_events_choices', '2026-11-29 14:05:49.491197');
INSERT INTO django_migrations (id, app, name, applied) VALUES (34, 'django_celery_beat', '0006_auto_20180322_0932', '2026-11-29 14:05:50.197588');
INSERT INTO django_migrations (id, app, name, applied) VALUES (35, 'django_celery_beat', '0007_auto_20180521_0826', '2026-11-29 14:05:50.563038');
INSERT INTO django_migrations (id, app, name, applied) VALUES (36, 'django_celery_beat', '0008_auto_20180914_1922', '2026-11-29 14:05:50.773383');
INSERT INTO django_migrations (id, app, name, applied) VALUES (37, 'django_celery_beat', '0006_auto_20180210_1226', '2026-11-29 14:05:50.908037');
INSERT INTO django_migrations (id, app, name, applied) VALUES (38, 'django_celery_beat', '0006_periodictask_priority', '2026-11-29 14:05:50.968719');
INSERT INTO django_migrations (id, app, name, applied) VALUES (39, 'django_celery_beat', '0009_periodictask_headers', '2026-11-29 14:05:51.037960');
INSERT INTO django_migrations (id, app, name, applied) VALUES (40, 'django_celery_beat', '0010_auto_20190429_0326', '2026-11-29 14:05:51.736042');
INSERT INTO django_migrations (id, app, name, applied) VALUES (41, 'django_celery_beat', '0011_auto_20190508_0153', '2026-11-29 14:05:51.762663');
INSERT INTO django_migrations (id, app, name, applied) VALUES (42, 'django_celery_beat', '0012_periodictask_expire_seconds', '2026-11-29 14:05:51.802110');
INSERT INTO django_migrations (id, app, name, applied) VALUES (43, 'django_celery_beat', '0013_auto_20200609_0727', '2026-11-29 14:05:51.836355');
INSERT INTO django_migrations (id, app, name, applied) VALUES (44, 'django_celery_beat', '0014_remove_clockedschedule_enabled', '2026-11-29 14:05:51.852473');
INSERT INTO django_migrations (id, app, name, applied) VALUES (45, 'django_celery_beat', '0015_edit_solarschedule_events_choices', '2026-11-29 14:05:51.862513');
INSERT INTO django_migrations (id, app, name, applied) VALUES (46, 'django_celery_beat', '0016_alter_crontabschedule_timezone', '2026-11-29 14:05:51.946577');
INSERT INTO django_migrations (id, app, name, applied) VALUES (47, 'django_celery_beat', '0017_alter_crontabschedule_month_of_year', '2026-11-29 14:05:51.969767');
INSERT INTO django_migrations (id, app, name, applied) VALUES (48, 'django_celery_beat', '0018_improve_crontab_helptext', '2026-11-29 14:05:52.510605');
INSERT INTO django_migrations (id, app, name, applied) VALUES (49, 'django_celery_beat', '0019_alter_periodictasks_options', '2026-11-29 14:05:52.512477');
INSERT INTO django_migrations (id, app, name, applied) VALUES (50, 'identity', '0001_oidc_identities', '2026-11-29 14:05:52.544831');
INSERT INTO django_migrations (id, app, name, applied) VALUES (51, 'quotas', '0001_initial', '2026-11-29 14:05:55.846619');
INSERT INTO django_migrations (id, app, name, applied) VALUES (52, 'quotas', '0002_builtin_nodes', '2026-11-29 14:05:55.954407');
INSERT INTO django_migrations (id, app, name, applied) VALUES (53, 'quotas', '0003_revision_counters', '2026-11-29 14:05:55.968976');
INSERT INTO django_migrations (id, app, name, applied) VALUES (54, 'quotas', '0004_borrowing_lending_limits', '2026-11-29 14:05:56.624546');
INSERT INTO django_migrations (id, app, name, applied) VALUES (55, 'quotas', '0005_queue_job_priority_range', '2026-11-29 14:05:56.821751');
INSERT INTO django_migrations (id, app, name, applied) VALUES (56, 'quotas', '0006_queue_min_runtime', '2026-11-29 14:05:57.139700');
INSERT INTO django_migrations (id, app, name, applied) VALUES (57, 'quotas', '0007_tree_node_description', '2026-11-29 14:05:57.620790');
INSERT INTO django_migrations (id, app, name, applied) VALUES (58, 'scheduling', '0001_initial', '2026-11-29 14:05:57.947224');
INSERT INTO django_migrations (id, app, name, applied) VALUES (59, 'scheduling', '0002_default_cluster', '2026-11-29 14:05:58.056621');
INSERT INTO django_migrations (id, app, name, applied) VALUES (60, 'scheduling', '0003_scheduling_records', '2026-11-29 14:05:59.993039');
INSERT INTO django_migrations (id, app, name, applied) VALUES (61, 'scheduling', '0004_node_agents_group', '2026-11-29 14:06:00.230650');
INSERT INTO django_migrations (id, app, name, applied) VALUES (62, 'scheduling', '0005_node_pools_and_agent_bindings', '2026-11-29 14:06:00.467557');
INSERT INTO django_migrations (id, app, name, applied) VALUES (63, 'scheduling', '0006_podgroup_requeue_state', '2026-11-29 14:06:00.674412');
INSERT INTO django_migrations (id, app, name, applied) VALUES (64, 'scheduling', '0007_dead_nodes_and_outage_grace', '2026-11-29 14:06:00.976930');
INSERT INTO django_migrations (id, app, name, applied) VALUES (65, 'scheduling', '0008_pod_redundant_indexes', '2026-11-29 14:06:01.890628');
INSERT INTO django_migrations (id, app, name, applied) VALUES (66, 'scheduling', '0009_change_feed', '2026-11-29 14:06:02.122528');
INSERT INTO django_migrations (id, app, name, applied) VALUES (67, 'scheduling', '0010_change_feed_triggers', '2026-11-29 14:06:02.252023');
INSERT INTO django_migrations (id, app, name, applied) VALUES (68, 'scheduling', '0011_change_feed_sqlite', '2026-11-29 14:06:05.894359');
INSERT INTO django_migrations (id, app, name, applied) VALUES (69, 'scheduling', '0012_cluster_counters', '2026-11-29 14:06:06.328385');
INSERT INTO django_migrations (id, app, name, applied) VALUES (70, 'scheduling', '0013_usage_history', '2026-11-29 14:06:06.466590');
INSERT INTO django_migrations (id, app, name, applied) VALUES (71, 'scheduling', '0014_kubernetes_adapter', '2026-11-29 14:06:08.014588');
INSERT INTO django_migrations (id, app, name, applied) VALUES (72, 'scheduling', '0015_pod_node_no_db_constraint', '2026-11-29 14:06:08.446108');
INSERT INTO django_migrations (id, app, name, applied) VALUES (73, 'scheduling', '0016_feed_bindings_skip_diff', '2026-11-29 14:06:08.721938');
INSERT INTO django_migrations (id, app, name, applied) VALUES (74, 'scheduling', '0017_pod_binding_indexes', '2026-11-29 14:06:09.297924');
INSERT INTO django_migrations (id, app, name, applied) VALUES (75, 'scheduling', '0018_session_bindings_lz4', '2026-11-29 14:06:10.515636');
INSERT INTO django_migrations (id, app, name, applied) VALUES (76, 'scheduling', '0019_session_timings_help', '2026-11-29 14:06:10.538745');
INSERT INTO django_migrations (id, app, name, applied) VALUES (77, 'scheduling', '0020_session_affinity', '2026-11-29 14:06:10.652934');
INSERT INTO django_migrations (id, app, name, applied) VALUES (78, 'scheduling', '0021_cluster_kubeconfig_encrypted', '2026-11-29 14:06:10.686641');
INSERT INTO django_migrations (id, app, name, applied) VALUES (79, 'scheduling', '0022_encrypt_kubeconfigs', '2026-11-29 14:06:10.994606');
INSERT INTO django_migrations (id, app, name, applied) VALUES (80, 'scheduling', '0023_remove_plaintext_kubeconfig', '2026-11-29 14:06:11.093038');
INSERT INTO django_migrations (id, app, name, applied) VALUES (81, 'scheduling', '0024_node_set_aside', '2026-11-29 14:06:11.157671');
INSERT INTO django_migrations (id, app, name, applied) VALUES (82, 'scheduling', '0025_kube_problem_reason', '2026-11-29 14:06:11.233367');
INSERT INTO django_migrations (id, app, name, applied) VALUES (83, 'scheduling', '0026_gang_releases', '2026-11-29 14:06:12.311709');
INSERT INTO django_migrations (id, app, name, applied) VALUES (84, 'scheduling', '0027_eviction_owners_removed_jobs', '2026-11-29 14:06:13.607851');
INSERT INTO django_migrations (id, app, name, applied) VALUES (85, 'scheduling', '0028_backfill_eviction_owners', '2026-11-29 14:06:14.160868');
INSERT INTO django_migrations (id, app, name, applied) VALUES (86, 'scheduling', '0029_job_actions', '2026-11-29 14:06:14.944809');
INSERT INTO django_migrations (id, app, name, applied) VALUES (87, 'scheduling', '0030_job_history', '2026-11-29 14:06:15.067885');
INSERT INTO django_migrations (id, app, name, applied) VALUES (88, 'security', '0001_api_tokens', '2026-11-29 14:06:15.177080');
INSERT INTO django_migrations (id, app, name, applied) VALUES (89, 'security', '0002_hash_drf_tokens', '2026-11-29 14:06:15.305973');
INSERT INTO django_migrations (id, app, name, applied) VALUES (90, 'security', '0003_security_events', '2026-11-29 14:06:15.318159');
INSERT INTO django_migrations (id, app, name, applied) VALUES (91, 'security', '0004_roles_synced_event', '2026-11-29 14:06:15.329806');
INSERT INTO django_migrations (id, app, name, applied) VALUES (92, 'sessions', '0001_initial', '2026-11-29 14:06:15.347829');
