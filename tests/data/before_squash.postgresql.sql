-- A database at the schema of every migration before the squash (quotas 0001-0007, scheduling 0001-0030,
-- security 0001-0004, changerequests 0001, identity 0001 and the third-party apps' of the time), with its
-- django_migrations rows and no other data. Loaded by tests/test_migrations.py, which upgrades it with the squashed
-- migrations. Made with `pg_dump --schema-only --no-owner --no-privileges` and `pg_dump --data-only --inserts -t
-- django_migrations` of a database migrated at the time (pg_dump's `\restrict` lines left out).

--
-- PostgreSQL database dump
--


-- Dumped from database version 15.20 (Debian 15.20-0+deb12u1)
-- Dumped by pg_dump version 15.20 (Debian 15.20-0+deb12u1)

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

--
-- Name: fairway_feed_scheduling_node_delete(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.fairway_feed_scheduling_node_delete() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN

    WITH c AS MATERIALIZED (SELECT cluster_id, id FROM old_rows),
    bumped AS (
        INSERT INTO quotas_revision (key, value)
        SELECT DISTINCT 'cluster-' || cluster_id, 1 FROM c
        ON CONFLICT (key) DO UPDATE SET value = quotas_revision.value + 1
        RETURNING key, value
    )
    INSERT INTO scheduling_rowchange (cluster_id, rev, kind, row_id)
    SELECT c.cluster_id, b.value, 1, c.id FROM c JOIN bumped AS b ON b.key = 'cluster-' || c.cluster_id;

    RETURN NULL;
END
$$;


--
-- Name: fairway_feed_scheduling_node_insert(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.fairway_feed_scheduling_node_insert() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN

    WITH c AS MATERIALIZED (SELECT cluster_id, id FROM new_rows),
    bumped AS (
        INSERT INTO quotas_revision (key, value)
        SELECT DISTINCT 'cluster-' || cluster_id, 1 FROM c
        ON CONFLICT (key) DO UPDATE SET value = quotas_revision.value + 1
        RETURNING key, value
    )
    INSERT INTO scheduling_rowchange (cluster_id, rev, kind, row_id)
    SELECT c.cluster_id, b.value, 1, c.id FROM c JOIN bumped AS b ON b.key = 'cluster-' || c.cluster_id;

    RETURN NULL;
END
$$;


--
-- Name: fairway_feed_scheduling_node_update(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.fairway_feed_scheduling_node_update() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN

    WITH c AS MATERIALIZED (SELECT cluster_id, id FROM (SELECT id, cluster_id, name, allocatable, labels, taints, unschedulable, ready FROM new_rows EXCEPT SELECT id, cluster_id, name, allocatable, labels, taints, unschedulable, ready FROM old_rows) AS d),
    bumped AS (
        INSERT INTO quotas_revision (key, value)
        SELECT DISTINCT 'cluster-' || cluster_id, 1 FROM c
        ON CONFLICT (key) DO UPDATE SET value = quotas_revision.value + 1
        RETURNING key, value
    )
    INSERT INTO scheduling_rowchange (cluster_id, rev, kind, row_id)
    SELECT c.cluster_id, b.value, 1, c.id FROM c JOIN bumped AS b ON b.key = 'cluster-' || c.cluster_id;

    RETURN NULL;
END
$$;


--
-- Name: fairway_feed_scheduling_pod_delete(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.fairway_feed_scheduling_pod_delete() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN

    WITH c AS MATERIALIZED (SELECT cluster_id, id FROM old_rows),
    bumped AS (
        INSERT INTO quotas_revision (key, value)
        SELECT DISTINCT 'cluster-' || cluster_id, 1 FROM c
        ON CONFLICT (key) DO UPDATE SET value = quotas_revision.value + 1
        RETURNING key, value
    )
    INSERT INTO scheduling_rowchange (cluster_id, rev, kind, row_id)
    SELECT c.cluster_id, b.value, 3, c.id FROM c JOIN bumped AS b ON b.key = 'cluster-' || c.cluster_id;

    RETURN NULL;
END
$$;


--
-- Name: fairway_feed_scheduling_pod_insert(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.fairway_feed_scheduling_pod_insert() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN

    WITH c AS MATERIALIZED (SELECT cluster_id, id FROM new_rows),
    bumped AS (
        INSERT INTO quotas_revision (key, value)
        SELECT DISTINCT 'cluster-' || cluster_id, 1 FROM c
        ON CONFLICT (key) DO UPDATE SET value = quotas_revision.value + 1
        RETURNING key, value
    )
    INSERT INTO scheduling_rowchange (cluster_id, rev, kind, row_id)
    SELECT c.cluster_id, b.value, 3, c.id FROM c JOIN bumped AS b ON b.key = 'cluster-' || c.cluster_id;

    RETURN NULL;
END
$$;


--
-- Name: fairway_feed_scheduling_pod_update(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.fairway_feed_scheduling_pod_update() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
IF current_setting('fairway.feed_every_row_changed', true) = 'on' THEN

    WITH c AS MATERIALIZED (SELECT cluster_id, id FROM new_rows),
    bumped AS (
        INSERT INTO quotas_revision (key, value)
        SELECT DISTINCT 'cluster-' || cluster_id, 1 FROM c
        ON CONFLICT (key) DO UPDATE SET value = quotas_revision.value + 1
        RETURNING key, value
    )
    INSERT INTO scheduling_rowchange (cluster_id, rev, kind, row_id)
    SELECT c.cluster_id, b.value, 3, c.id FROM c JOIN bumped AS b ON b.key = 'cluster-' || c.cluster_id;

ELSE

    WITH c AS MATERIALIZED (SELECT cluster_id, id FROM (SELECT id, cluster_id, namespace_id, name, podgroup_id, task_name, request, priority, preemptible, quota_group_id, status, node_id, node_selector, tolerations, labels, created, started FROM new_rows EXCEPT SELECT id, cluster_id, namespace_id, name, podgroup_id, task_name, request, priority, preemptible, quota_group_id, status, node_id, node_selector, tolerations, labels, created, started FROM old_rows) AS d),
    bumped AS (
        INSERT INTO quotas_revision (key, value)
        SELECT DISTINCT 'cluster-' || cluster_id, 1 FROM c
        ON CONFLICT (key) DO UPDATE SET value = quotas_revision.value + 1
        RETURNING key, value
    )
    INSERT INTO scheduling_rowchange (cluster_id, rev, kind, row_id)
    SELECT c.cluster_id, b.value, 3, c.id FROM c JOIN bumped AS b ON b.key = 'cluster-' || c.cluster_id;

END IF;
    RETURN NULL;
END
$$;


--
-- Name: fairway_feed_scheduling_podgroup_delete(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.fairway_feed_scheduling_podgroup_delete() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN

    WITH c AS MATERIALIZED (SELECT cluster_id, id FROM old_rows),
    bumped AS (
        INSERT INTO quotas_revision (key, value)
        SELECT DISTINCT 'cluster-' || cluster_id, 1 FROM c
        ON CONFLICT (key) DO UPDATE SET value = quotas_revision.value + 1
        RETURNING key, value
    )
    INSERT INTO scheduling_rowchange (cluster_id, rev, kind, row_id)
    SELECT c.cluster_id, b.value, 2, c.id FROM c JOIN bumped AS b ON b.key = 'cluster-' || c.cluster_id;

    RETURN NULL;
END
$$;


--
-- Name: fairway_feed_scheduling_podgroup_insert(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.fairway_feed_scheduling_podgroup_insert() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN

    WITH c AS MATERIALIZED (SELECT cluster_id, id FROM new_rows),
    bumped AS (
        INSERT INTO quotas_revision (key, value)
        SELECT DISTINCT 'cluster-' || cluster_id, 1 FROM c
        ON CONFLICT (key) DO UPDATE SET value = quotas_revision.value + 1
        RETURNING key, value
    )
    INSERT INTO scheduling_rowchange (cluster_id, rev, kind, row_id)
    SELECT c.cluster_id, b.value, 2, c.id FROM c JOIN bumped AS b ON b.key = 'cluster-' || c.cluster_id;

    RETURN NULL;
END
$$;


--
-- Name: fairway_feed_scheduling_podgroup_update(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.fairway_feed_scheduling_podgroup_update() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN

    WITH c AS MATERIALIZED (SELECT cluster_id, id FROM (SELECT id, cluster_id, namespace_id, name, queue_id, min_member, min_task_member, min_resources, priority, priority_class_name, phase, created, conditions, unplaced_sessions, requeues, backoff_until, reason, message, blocker, suspended_at FROM new_rows EXCEPT SELECT id, cluster_id, namespace_id, name, queue_id, min_member, min_task_member, min_resources, priority, priority_class_name, phase, created, conditions, unplaced_sessions, requeues, backoff_until, reason, message, blocker, suspended_at FROM old_rows) AS d),
    bumped AS (
        INSERT INTO quotas_revision (key, value)
        SELECT DISTINCT 'cluster-' || cluster_id, 1 FROM c
        ON CONFLICT (key) DO UPDATE SET value = quotas_revision.value + 1
        RETURNING key, value
    )
    INSERT INTO scheduling_rowchange (cluster_id, rev, kind, row_id)
    SELECT c.cluster_id, b.value, 2, c.id FROM c JOIN bumped AS b ON b.key = 'cluster-' || c.cluster_id;

    RETURN NULL;
END
$$;


SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: auth_group; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.auth_group (
    id integer NOT NULL,
    name character varying(150) NOT NULL
);


--
-- Name: auth_group_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.auth_group ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.auth_group_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: auth_group_permissions; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.auth_group_permissions (
    id bigint NOT NULL,
    group_id integer NOT NULL,
    permission_id integer NOT NULL
);


--
-- Name: auth_group_permissions_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.auth_group_permissions ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.auth_group_permissions_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: auth_permission; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.auth_permission (
    id integer NOT NULL,
    name character varying(255) NOT NULL,
    content_type_id integer NOT NULL,
    codename character varying(100) NOT NULL
);


--
-- Name: auth_permission_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.auth_permission ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.auth_permission_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: auth_user; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.auth_user (
    id integer NOT NULL,
    password character varying(128) NOT NULL,
    last_login timestamp with time zone,
    is_superuser boolean NOT NULL,
    username character varying(150) NOT NULL,
    first_name character varying(150) NOT NULL,
    last_name character varying(150) NOT NULL,
    email character varying(254) NOT NULL,
    is_staff boolean NOT NULL,
    is_active boolean NOT NULL,
    date_joined timestamp with time zone NOT NULL
);


--
-- Name: auth_user_groups; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.auth_user_groups (
    id bigint NOT NULL,
    user_id integer NOT NULL,
    group_id integer NOT NULL
);


--
-- Name: auth_user_groups_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.auth_user_groups ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.auth_user_groups_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: auth_user_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.auth_user ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.auth_user_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: auth_user_user_permissions; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.auth_user_user_permissions (
    id bigint NOT NULL,
    user_id integer NOT NULL,
    permission_id integer NOT NULL
);


--
-- Name: auth_user_user_permissions_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.auth_user_user_permissions ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.auth_user_user_permissions_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: axes_accessattempt; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.axes_accessattempt (
    id integer NOT NULL,
    user_agent character varying(255) NOT NULL,
    ip_address inet,
    username character varying(255),
    http_accept character varying(1025) NOT NULL,
    path_info character varying(255) NOT NULL,
    attempt_time timestamp with time zone NOT NULL,
    get_data text NOT NULL,
    post_data text NOT NULL,
    failures_since_start integer NOT NULL,
    CONSTRAINT axes_accessattempt_failures_since_start_check CHECK ((failures_since_start >= 0))
);


--
-- Name: axes_accessattempt_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.axes_accessattempt ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.axes_accessattempt_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: axes_accessattemptexpiration; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.axes_accessattemptexpiration (
    access_attempt_id integer NOT NULL,
    expires_at timestamp with time zone NOT NULL
);


--
-- Name: axes_accessfailurelog; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.axes_accessfailurelog (
    id integer NOT NULL,
    user_agent character varying(255) NOT NULL,
    ip_address inet,
    username character varying(255),
    http_accept character varying(1025) NOT NULL,
    path_info character varying(255) NOT NULL,
    attempt_time timestamp with time zone NOT NULL,
    locked_out boolean NOT NULL
);


--
-- Name: axes_accessfailurelog_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.axes_accessfailurelog ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.axes_accessfailurelog_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: axes_accesslog; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.axes_accesslog (
    id integer NOT NULL,
    user_agent character varying(255) NOT NULL,
    ip_address inet,
    username character varying(255),
    http_accept character varying(1025) NOT NULL,
    path_info character varying(255) NOT NULL,
    attempt_time timestamp with time zone NOT NULL,
    logout_time timestamp with time zone,
    session_hash character varying(64) NOT NULL
);


--
-- Name: axes_accesslog_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.axes_accesslog ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.axes_accesslog_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: changerequests_changerequest; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.changerequests_changerequest (
    id bigint NOT NULL,
    cluster character varying(63) NOT NULL,
    summary character varying(500) NOT NULL,
    reason text NOT NULL,
    changes jsonb NOT NULL,
    base jsonb NOT NULL,
    trees_revision bigint NOT NULL,
    whatif jsonb NOT NULL,
    needs_room jsonb NOT NULL,
    status character varying(12) NOT NULL,
    comment text NOT NULL,
    outcome text NOT NULL,
    created timestamp with time zone NOT NULL,
    updated timestamp with time zone NOT NULL,
    decided timestamp with time zone,
    requester_id integer,
    reviewer_id integer,
    CONSTRAINT changerequests_changerequest_trees_revision_check CHECK ((trees_revision >= 0))
);


--
-- Name: changerequests_changerequest_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.changerequests_changerequest ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.changerequests_changerequest_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: changerequests_historicalchangerequest; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.changerequests_historicalchangerequest (
    id bigint NOT NULL,
    cluster character varying(63) NOT NULL,
    summary character varying(500) NOT NULL,
    reason text NOT NULL,
    changes jsonb NOT NULL,
    base jsonb NOT NULL,
    trees_revision bigint NOT NULL,
    whatif jsonb NOT NULL,
    needs_room jsonb NOT NULL,
    status character varying(12) NOT NULL,
    comment text NOT NULL,
    outcome text NOT NULL,
    created timestamp with time zone NOT NULL,
    decided timestamp with time zone,
    history_id integer NOT NULL,
    history_date timestamp with time zone NOT NULL,
    history_change_reason character varying(100),
    history_type character varying(1) NOT NULL,
    history_user_id integer,
    requester_id integer,
    reviewer_id integer,
    CONSTRAINT changerequests_historicalchangerequest_trees_revision_check CHECK ((trees_revision >= 0))
);


--
-- Name: changerequests_historicalchangerequest_history_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.changerequests_historicalchangerequest ALTER COLUMN history_id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.changerequests_historicalchangerequest_history_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: django_admin_log; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.django_admin_log (
    id integer NOT NULL,
    action_time timestamp with time zone NOT NULL,
    object_id text,
    object_repr character varying(200) NOT NULL,
    action_flag smallint NOT NULL,
    change_message text NOT NULL,
    content_type_id integer,
    user_id integer NOT NULL,
    CONSTRAINT django_admin_log_action_flag_check CHECK ((action_flag >= 0))
);


--
-- Name: django_admin_log_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.django_admin_log ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.django_admin_log_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: django_celery_beat_clockedschedule; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.django_celery_beat_clockedschedule (
    id integer NOT NULL,
    clocked_time timestamp with time zone NOT NULL
);


--
-- Name: django_celery_beat_clockedschedule_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.django_celery_beat_clockedschedule ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.django_celery_beat_clockedschedule_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: django_celery_beat_crontabschedule; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.django_celery_beat_crontabschedule (
    id integer NOT NULL,
    minute character varying(240) NOT NULL,
    hour character varying(96) NOT NULL,
    day_of_week character varying(64) NOT NULL,
    day_of_month character varying(124) NOT NULL,
    month_of_year character varying(64) NOT NULL,
    timezone character varying(63) NOT NULL
);


--
-- Name: django_celery_beat_crontabschedule_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.django_celery_beat_crontabschedule ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.django_celery_beat_crontabschedule_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: django_celery_beat_intervalschedule; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.django_celery_beat_intervalschedule (
    id integer NOT NULL,
    every integer NOT NULL,
    period character varying(24) NOT NULL
);


--
-- Name: django_celery_beat_intervalschedule_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.django_celery_beat_intervalschedule ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.django_celery_beat_intervalschedule_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: django_celery_beat_periodictask; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.django_celery_beat_periodictask (
    id integer NOT NULL,
    name character varying(200) NOT NULL,
    task character varying(200) NOT NULL,
    args text NOT NULL,
    kwargs text NOT NULL,
    queue character varying(200),
    exchange character varying(200),
    routing_key character varying(200),
    expires timestamp with time zone,
    enabled boolean NOT NULL,
    last_run_at timestamp with time zone,
    total_run_count integer NOT NULL,
    date_changed timestamp with time zone NOT NULL,
    description text NOT NULL,
    crontab_id integer,
    interval_id integer,
    solar_id integer,
    one_off boolean NOT NULL,
    start_time timestamp with time zone,
    priority integer,
    headers text NOT NULL,
    clocked_id integer,
    expire_seconds integer,
    CONSTRAINT django_celery_beat_periodictask_expire_seconds_check CHECK ((expire_seconds >= 0)),
    CONSTRAINT django_celery_beat_periodictask_priority_check CHECK ((priority >= 0)),
    CONSTRAINT django_celery_beat_periodictask_total_run_count_check CHECK ((total_run_count >= 0))
);


--
-- Name: django_celery_beat_periodictask_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.django_celery_beat_periodictask ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.django_celery_beat_periodictask_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: django_celery_beat_periodictasks; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.django_celery_beat_periodictasks (
    ident smallint NOT NULL,
    last_update timestamp with time zone NOT NULL
);


--
-- Name: django_celery_beat_solarschedule; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.django_celery_beat_solarschedule (
    id integer NOT NULL,
    event character varying(24) NOT NULL,
    latitude numeric(9,6) NOT NULL,
    longitude numeric(9,6) NOT NULL
);


--
-- Name: django_celery_beat_solarschedule_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.django_celery_beat_solarschedule ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.django_celery_beat_solarschedule_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: django_content_type; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.django_content_type (
    id integer NOT NULL,
    app_label character varying(100) NOT NULL,
    model character varying(100) NOT NULL
);


--
-- Name: django_content_type_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.django_content_type ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.django_content_type_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: django_migrations; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.django_migrations (
    id bigint NOT NULL,
    app character varying(255) NOT NULL,
    name character varying(255) NOT NULL,
    applied timestamp with time zone NOT NULL
);


--
-- Name: django_migrations_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.django_migrations ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.django_migrations_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: django_session; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.django_session (
    session_key character varying(40) NOT NULL,
    session_data text NOT NULL,
    expire_date timestamp with time zone NOT NULL
);


--
-- Name: identity_oidcidentity; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.identity_oidcidentity (
    id bigint NOT NULL,
    issuer character varying(255) NOT NULL,
    subject character varying(255) NOT NULL,
    created timestamp with time zone NOT NULL,
    last_synced timestamp with time zone,
    user_id integer NOT NULL
);


--
-- Name: identity_oidcidentity_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.identity_oidcidentity ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.identity_oidcidentity_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: quotas_historicalnamespace; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.quotas_historicalnamespace (
    id bigint NOT NULL,
    created timestamp with time zone NOT NULL,
    name character varying(63) NOT NULL,
    weight integer NOT NULL,
    hard jsonb,
    history_id integer NOT NULL,
    history_date timestamp with time zone NOT NULL,
    history_change_reason character varying(100),
    history_type character varying(1) NOT NULL,
    history_user_id integer,
    default_queue_id bigint,
    quota_group_id bigint,
    CONSTRAINT quotas_historicalnamespace_weight_check CHECK ((weight >= 0))
);


--
-- Name: quotas_historicalnamespace_history_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.quotas_historicalnamespace ALTER COLUMN history_id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.quotas_historicalnamespace_history_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: quotas_historicalqueue; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.quotas_historicalqueue (
    id bigint NOT NULL,
    created timestamp with time zone NOT NULL,
    name character varying(63) NOT NULL,
    weight integer NOT NULL,
    capability jsonb NOT NULL,
    deserved jsonb NOT NULL,
    guarantee jsonb NOT NULL,
    reclaimable boolean NOT NULL,
    priority integer NOT NULL,
    state character varying(8) NOT NULL,
    closed_by_parent boolean NOT NULL,
    history_id integer NOT NULL,
    history_date timestamp with time zone NOT NULL,
    history_change_reason character varying(100),
    history_type character varying(1) NOT NULL,
    history_user_id integer,
    parent_id bigint,
    borrowing_limit jsonb,
    lending_limit jsonb,
    allow_non_preemptible boolean NOT NULL,
    max_priority integer,
    min_runtime integer,
    description text NOT NULL,
    CONSTRAINT quotas_historicalqueue_min_runtime_check CHECK ((min_runtime >= 0)),
    CONSTRAINT quotas_historicalqueue_priority_check CHECK ((priority >= 0)),
    CONSTRAINT quotas_historicalqueue_weight_check CHECK ((weight >= 0))
);


--
-- Name: quotas_historicalqueue_history_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.quotas_historicalqueue ALTER COLUMN history_id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.quotas_historicalqueue_history_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: quotas_historicalqueue_teams; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.quotas_historicalqueue_teams (
    id bigint NOT NULL,
    m2m_history_id integer NOT NULL,
    group_id integer,
    history_id integer NOT NULL,
    queue_id bigint
);


--
-- Name: quotas_historicalqueue_teams_m2m_history_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.quotas_historicalqueue_teams ALTER COLUMN m2m_history_id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.quotas_historicalqueue_teams_m2m_history_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: quotas_historicalquotagroup; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.quotas_historicalquotagroup (
    id bigint NOT NULL,
    created timestamp with time zone NOT NULL,
    name character varying(253) NOT NULL,
    is_parent boolean NOT NULL,
    min jsonb NOT NULL,
    max jsonb NOT NULL,
    shared_weight jsonb,
    allow_lent boolean NOT NULL,
    tree_id character varying(63) NOT NULL,
    min_scale_exempt boolean NOT NULL,
    history_id integer NOT NULL,
    history_date timestamp with time zone NOT NULL,
    history_change_reason character varying(100),
    history_type character varying(1) NOT NULL,
    history_user_id integer,
    parent_id bigint,
    borrowing_limit jsonb,
    lending_limit jsonb,
    description text NOT NULL
);


--
-- Name: quotas_historicalquotagroup_history_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.quotas_historicalquotagroup ALTER COLUMN history_id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.quotas_historicalquotagroup_history_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: quotas_historicalquotagroup_teams; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.quotas_historicalquotagroup_teams (
    id bigint NOT NULL,
    m2m_history_id integer NOT NULL,
    group_id integer,
    history_id integer NOT NULL,
    quotagroup_id bigint
);


--
-- Name: quotas_historicalquotagroup_teams_m2m_history_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.quotas_historicalquotagroup_teams ALTER COLUMN m2m_history_id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.quotas_historicalquotagroup_teams_m2m_history_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: quotas_namespace; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.quotas_namespace (
    id bigint NOT NULL,
    version bigint NOT NULL,
    created timestamp with time zone NOT NULL,
    updated timestamp with time zone NOT NULL,
    name character varying(63) NOT NULL,
    weight integer NOT NULL,
    hard jsonb,
    default_queue_id bigint,
    quota_group_id bigint,
    CONSTRAINT namespace_weight_positive CHECK ((weight >= 1)),
    CONSTRAINT quotas_namespace_version_check CHECK ((version >= 0)),
    CONSTRAINT quotas_namespace_weight_check CHECK ((weight >= 0))
);


--
-- Name: quotas_namespace_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.quotas_namespace ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.quotas_namespace_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: quotas_queue; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.quotas_queue (
    id bigint NOT NULL,
    version bigint NOT NULL,
    created timestamp with time zone NOT NULL,
    updated timestamp with time zone NOT NULL,
    name character varying(63) NOT NULL,
    weight integer NOT NULL,
    capability jsonb NOT NULL,
    deserved jsonb NOT NULL,
    guarantee jsonb NOT NULL,
    reclaimable boolean NOT NULL,
    priority integer NOT NULL,
    state character varying(8) NOT NULL,
    closed_by_parent boolean NOT NULL,
    parent_id bigint,
    borrowing_limit jsonb,
    lending_limit jsonb,
    allow_non_preemptible boolean NOT NULL,
    max_priority integer,
    min_runtime integer,
    description text NOT NULL,
    CONSTRAINT queue_parent_unless_root CHECK (((parent_id IS NOT NULL) OR ((name)::text = 'root'::text))),
    CONSTRAINT queue_weight_range CHECK (((weight >= 1) AND (weight <= 65535))),
    CONSTRAINT quotas_queue_min_runtime_check CHECK ((min_runtime >= 0)),
    CONSTRAINT quotas_queue_priority_check CHECK ((priority >= 0)),
    CONSTRAINT quotas_queue_version_check CHECK ((version >= 0)),
    CONSTRAINT quotas_queue_weight_check CHECK ((weight >= 0))
);


--
-- Name: quotas_queue_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.quotas_queue ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.quotas_queue_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: quotas_queue_teams; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.quotas_queue_teams (
    id bigint NOT NULL,
    queue_id bigint NOT NULL,
    group_id integer NOT NULL
);


--
-- Name: quotas_queue_teams_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.quotas_queue_teams ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.quotas_queue_teams_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: quotas_quotagroup; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.quotas_quotagroup (
    id bigint NOT NULL,
    version bigint NOT NULL,
    created timestamp with time zone NOT NULL,
    updated timestamp with time zone NOT NULL,
    name character varying(253) NOT NULL,
    is_parent boolean NOT NULL,
    min jsonb NOT NULL,
    max jsonb NOT NULL,
    shared_weight jsonb,
    allow_lent boolean NOT NULL,
    tree_id character varying(63) NOT NULL,
    min_scale_exempt boolean NOT NULL,
    parent_id bigint,
    borrowing_limit jsonb,
    lending_limit jsonb,
    description text NOT NULL,
    CONSTRAINT quota_group_parent_unless_root CHECK (((parent_id IS NOT NULL) OR ((name)::text = 'root'::text))),
    CONSTRAINT quotas_quotagroup_version_check CHECK ((version >= 0))
);


--
-- Name: quotas_quotagroup_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.quotas_quotagroup ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.quotas_quotagroup_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: quotas_quotagroup_teams; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.quotas_quotagroup_teams (
    id bigint NOT NULL,
    quotagroup_id bigint NOT NULL,
    group_id integer NOT NULL
);


--
-- Name: quotas_quotagroup_teams_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.quotas_quotagroup_teams ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.quotas_quotagroup_teams_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: quotas_revision; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.quotas_revision (
    id bigint NOT NULL,
    key character varying(64) NOT NULL,
    value bigint NOT NULL,
    CONSTRAINT quotas_revision_value_check CHECK ((value >= 0))
);


--
-- Name: quotas_revision_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.quotas_revision ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.quotas_revision_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: scheduling_cluster; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.scheduling_cluster (
    id bigint NOT NULL,
    name character varying(63) NOT NULL,
    description character varying(255) NOT NULL,
    created timestamp with time zone NOT NULL,
    node_heartbeat_timeout integer NOT NULL,
    scheduler_policy text NOT NULL,
    simulated boolean NOT NULL,
    nodes_checked_at timestamp with time zone,
    nodes_grace_from timestamp with time zone,
    pod_eviction_timeout integer NOT NULL,
    scheduler_name character varying(63) NOT NULL,
    source character varying(10) NOT NULL,
    tree_source character varying(10) NOT NULL,
    kubeconfig_encrypted text NOT NULL,
    CONSTRAINT scheduling_cluster_node_heartbeat_timeout_check CHECK ((node_heartbeat_timeout >= 0)),
    CONSTRAINT scheduling_cluster_pod_eviction_timeout_check CHECK ((pod_eviction_timeout >= 0))
);


--
-- Name: scheduling_cluster_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.scheduling_cluster ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.scheduling_cluster_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: scheduling_clustercounters; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.scheduling_clustercounters (
    cluster_id bigint NOT NULL,
    counts jsonb NOT NULL
);


--
-- Name: scheduling_clusterfeed; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.scheduling_clusterfeed (
    cluster_id bigint NOT NULL,
    epoch uuid NOT NULL,
    pruned_through bigint NOT NULL,
    last_mirror character varying(64) NOT NULL,
    last_mirror_rev bigint NOT NULL,
    last_queue character varying(200) NOT NULL,
    last_session_at timestamp with time zone
);


--
-- Name: scheduling_clusterlease; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.scheduling_clusterlease (
    id bigint NOT NULL,
    key bigint NOT NULL,
    owner character varying(64) NOT NULL,
    expires timestamp with time zone,
    cluster_id bigint NOT NULL
);


--
-- Name: scheduling_clusterlease_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.scheduling_clusterlease ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.scheduling_clusterlease_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: scheduling_eviction; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.scheduling_eviction (
    id bigint NOT NULL,
    pod_uid character varying(520) NOT NULL,
    namespace character varying(63) NOT NULL,
    node character varying(253) NOT NULL,
    action character varying(16) NOT NULL,
    reason character varying(63) NOT NULL,
    message text NOT NULL,
    preemptor character varying(520) NOT NULL,
    blocker jsonb,
    created timestamp with time zone NOT NULL,
    cluster_id bigint NOT NULL,
    pod_id bigint,
    session_id bigint,
    api_attempts integer NOT NULL,
    api_refusal text NOT NULL,
    api_retry_at timestamp with time zone,
    api_status character varying(10) NOT NULL,
    job character varying(253) NOT NULL,
    queue character varying(253) NOT NULL,
    quota_group character varying(253) NOT NULL,
    removed_job_id bigint,
    CONSTRAINT scheduling_eviction_api_attempts_check CHECK ((api_attempts >= 0))
);


--
-- Name: scheduling_eviction_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.scheduling_eviction ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.scheduling_eviction_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: scheduling_jobrecord; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.scheduling_jobrecord (
    id bigint NOT NULL,
    namespace character varying(63) NOT NULL,
    name character varying(253) NOT NULL,
    queue character varying(253) NOT NULL,
    quota_group character varying(253) NOT NULL,
    priority integer NOT NULL,
    preemptible boolean NOT NULL,
    min_member integer NOT NULL,
    roles jsonb NOT NULL,
    min_resources jsonb,
    submitted timestamp with time zone NOT NULL,
    started timestamp with time zone,
    finished timestamp with time zone,
    runtime double precision,
    pod_runtimes jsonb,
    evictions integer NOT NULL,
    cluster_id bigint NOT NULL,
    CONSTRAINT scheduling_jobrecord_evictions_check CHECK ((evictions >= 0)),
    CONSTRAINT scheduling_jobrecord_min_member_check CHECK ((min_member >= 0))
);


--
-- Name: scheduling_jobrecord_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.scheduling_jobrecord ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.scheduling_jobrecord_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: scheduling_kubeobjectproblem; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.scheduling_kubeobjectproblem (
    id bigint NOT NULL,
    kind character varying(63) NOT NULL,
    namespace character varying(63) NOT NULL,
    name character varying(253) NOT NULL,
    message text NOT NULL,
    resource_version character varying(63) NOT NULL,
    first_seen timestamp with time zone NOT NULL,
    last_seen timestamp with time zone NOT NULL,
    event_sent boolean NOT NULL,
    cluster_id bigint NOT NULL,
    reason character varying(63) NOT NULL
);


--
-- Name: scheduling_kubeobjectproblem_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.scheduling_kubeobjectproblem ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.scheduling_kubeobjectproblem_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: scheduling_node; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.scheduling_node (
    id bigint NOT NULL,
    name character varying(253) NOT NULL,
    allocatable jsonb NOT NULL,
    labels jsonb NOT NULL,
    taints jsonb NOT NULL,
    unschedulable boolean NOT NULL,
    ready boolean NOT NULL,
    last_heartbeat timestamp with time zone,
    created timestamp with time zone NOT NULL,
    updated timestamp with time zone NOT NULL,
    cluster_id bigint NOT NULL,
    pool character varying(63) NOT NULL,
    not_ready_since timestamp with time zone,
    set_aside text
);


--
-- Name: scheduling_node_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.scheduling_node ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.scheduling_node_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: scheduling_nodeagentbinding; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.scheduling_nodeagentbinding (
    id bigint NOT NULL,
    node character varying(253) NOT NULL,
    pool character varying(63) NOT NULL,
    created timestamp with time zone NOT NULL,
    cluster_id bigint NOT NULL,
    user_id integer NOT NULL,
    CONSTRAINT node_agent_binding_node_xor_pool CHECK (((((node)::text = ''::text) AND (NOT ((pool)::text = ''::text))) OR ((NOT ((node)::text = ''::text)) AND ((pool)::text = ''::text))))
);


--
-- Name: scheduling_nodeagentbinding_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.scheduling_nodeagentbinding ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.scheduling_nodeagentbinding_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: scheduling_pod; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.scheduling_pod (
    id bigint NOT NULL,
    name character varying(253) NOT NULL,
    task_name character varying(63) NOT NULL,
    request jsonb NOT NULL,
    priority integer NOT NULL,
    preemptible boolean NOT NULL,
    status character varying(10) NOT NULL,
    node_selector jsonb NOT NULL,
    tolerations jsonb NOT NULL,
    labels jsonb NOT NULL,
    duration_seconds integer,
    created timestamp with time zone NOT NULL,
    started timestamp with time zone,
    finished timestamp with time zone,
    updated timestamp with time zone NOT NULL,
    cluster_id bigint NOT NULL,
    namespace_id bigint NOT NULL,
    node_id bigint,
    quota_group_id bigint,
    podgroup_id bigint,
    message text NOT NULL,
    reason character varying(63) NOT NULL,
    CONSTRAINT scheduling_pod_duration_seconds_check CHECK ((duration_seconds >= 0))
);


--
-- Name: scheduling_pod_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.scheduling_pod ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.scheduling_pod_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: scheduling_podgroup; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.scheduling_podgroup (
    id bigint NOT NULL,
    name character varying(253) NOT NULL,
    min_member integer NOT NULL,
    min_task_member jsonb NOT NULL,
    min_resources jsonb,
    priority integer NOT NULL,
    priority_class_name character varying(253) NOT NULL,
    phase character varying(10) NOT NULL,
    conditions jsonb NOT NULL,
    created timestamp with time zone NOT NULL,
    updated timestamp with time zone NOT NULL,
    cluster_id bigint NOT NULL,
    namespace_id bigint NOT NULL,
    queue_id bigint NOT NULL,
    blocker jsonb,
    message text NOT NULL,
    reason character varying(63) NOT NULL,
    backoff_until timestamp with time zone,
    requeues integer NOT NULL,
    unplaced_sessions integer NOT NULL,
    gang_releases integer NOT NULL,
    idle_gpu_seconds bigint NOT NULL,
    release_reason text NOT NULL,
    released_at timestamp with time zone,
    deletion_requested_at timestamp with time zone,
    deletion_requested_by character varying(150),
    kube_owner character varying(400),
    suspended_at timestamp with time zone,
    suspended_by character varying(150),
    CONSTRAINT scheduling_podgroup_gang_releases_check CHECK ((gang_releases >= 0)),
    CONSTRAINT scheduling_podgroup_idle_gpu_seconds_check CHECK ((idle_gpu_seconds >= 0)),
    CONSTRAINT scheduling_podgroup_min_member_check CHECK ((min_member >= 0)),
    CONSTRAINT scheduling_podgroup_requeues_check CHECK ((requeues >= 0)),
    CONSTRAINT scheduling_podgroup_unplaced_sessions_check CHECK ((unplaced_sessions >= 0))
);


--
-- Name: scheduling_podgroup_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.scheduling_podgroup ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.scheduling_podgroup_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: scheduling_podgroupreason; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.scheduling_podgroupreason (
    id bigint NOT NULL,
    "time" timestamp with time zone NOT NULL,
    phase character varying(10) NOT NULL,
    reason character varying(63) NOT NULL,
    message text NOT NULL,
    blocker jsonb,
    podgroup_id bigint NOT NULL,
    session_id bigint
);


--
-- Name: scheduling_podgroupreason_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.scheduling_podgroupreason ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.scheduling_podgroupreason_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: scheduling_quotaoverstate; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.scheduling_quotaoverstate (
    id bigint NOT NULL,
    name character varying(253) NOT NULL,
    over_since timestamp with time zone NOT NULL,
    cluster_id bigint NOT NULL
);


--
-- Name: scheduling_quotaoverstate_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.scheduling_quotaoverstate ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.scheduling_quotaoverstate_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: scheduling_quotasample; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.scheduling_quotasample (
    id bigint NOT NULL,
    "time" timestamp with time zone NOT NULL,
    kind character varying(5) NOT NULL,
    name character varying(253) NOT NULL,
    request jsonb NOT NULL,
    allocated jsonb NOT NULL,
    deserved jsonb NOT NULL,
    borrowed jsonb NOT NULL,
    lent jsonb NOT NULL,
    cluster_id bigint NOT NULL
);


--
-- Name: scheduling_quotasample_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.scheduling_quotasample ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.scheduling_quotasample_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: scheduling_removedjob; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.scheduling_removedjob (
    id bigint NOT NULL,
    namespace character varying(63) NOT NULL,
    name character varying(253) NOT NULL,
    queue character varying(253) NOT NULL,
    quota_groups jsonb NOT NULL,
    phase character varying(10) NOT NULL,
    submitted timestamp with time zone NOT NULL,
    finished timestamp with time zone,
    removed_at timestamp with time zone NOT NULL,
    cause character varying(20) NOT NULL,
    reason text NOT NULL,
    cluster_id bigint NOT NULL
);


--
-- Name: scheduling_removedjob_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.scheduling_removedjob ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.scheduling_removedjob_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: scheduling_rowchange; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.scheduling_rowchange (
    id bigint NOT NULL,
    cluster_id bigint NOT NULL,
    rev bigint NOT NULL,
    kind smallint NOT NULL,
    row_id bigint NOT NULL
);


--
-- Name: scheduling_rowchange_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.scheduling_rowchange ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.scheduling_rowchange_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: scheduling_schedulingsession; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.scheduling_schedulingsession (
    id bigint NOT NULL,
    kind character varying(8) NOT NULL,
    status character varying(8) NOT NULL,
    started timestamp with time zone NOT NULL,
    finished timestamp with time zone,
    duration_ms double precision NOT NULL,
    timings jsonb NOT NULL,
    bound integer NOT NULL,
    pipelined integer NOT NULL,
    evicted integer NOT NULL,
    podgroups jsonb NOT NULL,
    pending_pods integer NOT NULL,
    warnings jsonb NOT NULL,
    error text NOT NULL,
    bindings jsonb NOT NULL,
    cluster_id bigint NOT NULL,
    CONSTRAINT scheduling_schedulingsession_bound_check CHECK ((bound >= 0)),
    CONSTRAINT scheduling_schedulingsession_evicted_check CHECK ((evicted >= 0)),
    CONSTRAINT scheduling_schedulingsession_pending_pods_check CHECK ((pending_pods >= 0)),
    CONSTRAINT scheduling_schedulingsession_pipelined_check CHECK ((pipelined >= 0))
);
ALTER TABLE ONLY public.scheduling_schedulingsession ALTER COLUMN bindings SET COMPRESSION lz4;


--
-- Name: scheduling_schedulingsession_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.scheduling_schedulingsession ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.scheduling_schedulingsession_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: scheduling_usagehistory; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.scheduling_usagehistory (
    id bigint NOT NULL,
    updated timestamp with time zone NOT NULL,
    nodes jsonb NOT NULL,
    cluster_id bigint NOT NULL
);


--
-- Name: scheduling_usagehistory_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.scheduling_usagehistory ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.scheduling_usagehistory_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: security_apitoken; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.security_apitoken (
    id bigint NOT NULL,
    name character varying(100) NOT NULL,
    prefix character varying(12) NOT NULL,
    digest character varying(64) NOT NULL,
    read_only boolean NOT NULL,
    created timestamp with time zone NOT NULL,
    expires timestamp with time zone NOT NULL,
    last_used timestamp with time zone,
    user_id integer NOT NULL
);


--
-- Name: security_apitoken_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.security_apitoken ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.security_apitoken_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: security_securityevent; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.security_securityevent (
    id bigint NOT NULL,
    "time" timestamp with time zone NOT NULL,
    actor character varying(150) NOT NULL,
    remote_address character varying(64) NOT NULL,
    kind character varying(32) NOT NULL,
    target character varying(255) NOT NULL,
    outcome character varying(16) NOT NULL,
    detail text NOT NULL
);


--
-- Name: security_securityevent_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.security_securityevent ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.security_securityevent_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: auth_group auth_group_name_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.auth_group
    ADD CONSTRAINT auth_group_name_key UNIQUE (name);


--
-- Name: auth_group_permissions auth_group_permissions_group_id_permission_id_0cd325b0_uniq; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.auth_group_permissions
    ADD CONSTRAINT auth_group_permissions_group_id_permission_id_0cd325b0_uniq UNIQUE (group_id, permission_id);


--
-- Name: auth_group_permissions auth_group_permissions_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.auth_group_permissions
    ADD CONSTRAINT auth_group_permissions_pkey PRIMARY KEY (id);


--
-- Name: auth_group auth_group_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.auth_group
    ADD CONSTRAINT auth_group_pkey PRIMARY KEY (id);


--
-- Name: auth_permission auth_permission_content_type_id_codename_01ab375a_uniq; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.auth_permission
    ADD CONSTRAINT auth_permission_content_type_id_codename_01ab375a_uniq UNIQUE (content_type_id, codename);


--
-- Name: auth_permission auth_permission_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.auth_permission
    ADD CONSTRAINT auth_permission_pkey PRIMARY KEY (id);


--
-- Name: auth_user_groups auth_user_groups_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.auth_user_groups
    ADD CONSTRAINT auth_user_groups_pkey PRIMARY KEY (id);


--
-- Name: auth_user_groups auth_user_groups_user_id_group_id_94350c0c_uniq; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.auth_user_groups
    ADD CONSTRAINT auth_user_groups_user_id_group_id_94350c0c_uniq UNIQUE (user_id, group_id);


--
-- Name: auth_user auth_user_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.auth_user
    ADD CONSTRAINT auth_user_pkey PRIMARY KEY (id);


--
-- Name: auth_user_user_permissions auth_user_user_permissions_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.auth_user_user_permissions
    ADD CONSTRAINT auth_user_user_permissions_pkey PRIMARY KEY (id);


--
-- Name: auth_user_user_permissions auth_user_user_permissions_user_id_permission_id_14a6b632_uniq; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.auth_user_user_permissions
    ADD CONSTRAINT auth_user_user_permissions_user_id_permission_id_14a6b632_uniq UNIQUE (user_id, permission_id);


--
-- Name: auth_user auth_user_username_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.auth_user
    ADD CONSTRAINT auth_user_username_key UNIQUE (username);


--
-- Name: axes_accessattempt axes_accessattempt_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.axes_accessattempt
    ADD CONSTRAINT axes_accessattempt_pkey PRIMARY KEY (id);


--
-- Name: axes_accessattempt axes_accessattempt_username_ip_address_user_agent_8ea22282_uniq; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.axes_accessattempt
    ADD CONSTRAINT axes_accessattempt_username_ip_address_user_agent_8ea22282_uniq UNIQUE (username, ip_address, user_agent);


--
-- Name: axes_accessattemptexpiration axes_accessattemptexpiration_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.axes_accessattemptexpiration
    ADD CONSTRAINT axes_accessattemptexpiration_pkey PRIMARY KEY (access_attempt_id);


--
-- Name: axes_accessfailurelog axes_accessfailurelog_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.axes_accessfailurelog
    ADD CONSTRAINT axes_accessfailurelog_pkey PRIMARY KEY (id);


--
-- Name: axes_accesslog axes_accesslog_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.axes_accesslog
    ADD CONSTRAINT axes_accesslog_pkey PRIMARY KEY (id);


--
-- Name: changerequests_changerequest changerequests_changerequest_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.changerequests_changerequest
    ADD CONSTRAINT changerequests_changerequest_pkey PRIMARY KEY (id);


--
-- Name: changerequests_historicalchangerequest changerequests_historicalchangerequest_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.changerequests_historicalchangerequest
    ADD CONSTRAINT changerequests_historicalchangerequest_pkey PRIMARY KEY (history_id);


--
-- Name: scheduling_clusterlease cluster_lease_unique; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.scheduling_clusterlease
    ADD CONSTRAINT cluster_lease_unique UNIQUE (cluster_id, key);


--
-- Name: django_admin_log django_admin_log_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.django_admin_log
    ADD CONSTRAINT django_admin_log_pkey PRIMARY KEY (id);


--
-- Name: django_celery_beat_clockedschedule django_celery_beat_clockedschedule_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.django_celery_beat_clockedschedule
    ADD CONSTRAINT django_celery_beat_clockedschedule_pkey PRIMARY KEY (id);


--
-- Name: django_celery_beat_crontabschedule django_celery_beat_crontabschedule_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.django_celery_beat_crontabschedule
    ADD CONSTRAINT django_celery_beat_crontabschedule_pkey PRIMARY KEY (id);


--
-- Name: django_celery_beat_intervalschedule django_celery_beat_intervalschedule_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.django_celery_beat_intervalschedule
    ADD CONSTRAINT django_celery_beat_intervalschedule_pkey PRIMARY KEY (id);


--
-- Name: django_celery_beat_periodictask django_celery_beat_periodictask_name_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.django_celery_beat_periodictask
    ADD CONSTRAINT django_celery_beat_periodictask_name_key UNIQUE (name);


--
-- Name: django_celery_beat_periodictask django_celery_beat_periodictask_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.django_celery_beat_periodictask
    ADD CONSTRAINT django_celery_beat_periodictask_pkey PRIMARY KEY (id);


--
-- Name: django_celery_beat_periodictasks django_celery_beat_periodictasks_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.django_celery_beat_periodictasks
    ADD CONSTRAINT django_celery_beat_periodictasks_pkey PRIMARY KEY (ident);


--
-- Name: django_celery_beat_solarschedule django_celery_beat_solar_event_latitude_longitude_ba64999a_uniq; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.django_celery_beat_solarschedule
    ADD CONSTRAINT django_celery_beat_solar_event_latitude_longitude_ba64999a_uniq UNIQUE (event, latitude, longitude);


--
-- Name: django_celery_beat_solarschedule django_celery_beat_solarschedule_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.django_celery_beat_solarschedule
    ADD CONSTRAINT django_celery_beat_solarschedule_pkey PRIMARY KEY (id);


--
-- Name: django_content_type django_content_type_app_label_model_76bd3d3b_uniq; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.django_content_type
    ADD CONSTRAINT django_content_type_app_label_model_76bd3d3b_uniq UNIQUE (app_label, model);


--
-- Name: django_content_type django_content_type_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.django_content_type
    ADD CONSTRAINT django_content_type_pkey PRIMARY KEY (id);


--
-- Name: django_migrations django_migrations_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.django_migrations
    ADD CONSTRAINT django_migrations_pkey PRIMARY KEY (id);


--
-- Name: django_session django_session_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.django_session
    ADD CONSTRAINT django_session_pkey PRIMARY KEY (session_key);


--
-- Name: identity_oidcidentity identity_oidcidentity_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.identity_oidcidentity
    ADD CONSTRAINT identity_oidcidentity_pkey PRIMARY KEY (id);


--
-- Name: identity_oidcidentity identity_oidcidentity_user_id_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.identity_oidcidentity
    ADD CONSTRAINT identity_oidcidentity_user_id_key UNIQUE (user_id);


--
-- Name: scheduling_kubeobjectproblem kube_problem_unique; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.scheduling_kubeobjectproblem
    ADD CONSTRAINT kube_problem_unique UNIQUE (cluster_id, kind, namespace, name);


--
-- Name: scheduling_nodeagentbinding node_agent_binding_unique; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.scheduling_nodeagentbinding
    ADD CONSTRAINT node_agent_binding_unique UNIQUE (user_id, cluster_id, node, pool);


--
-- Name: scheduling_node node_unique_name_per_cluster; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.scheduling_node
    ADD CONSTRAINT node_unique_name_per_cluster UNIQUE (cluster_id, name);


--
-- Name: identity_oidcidentity oidc_identity_issuer_subject; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.identity_oidcidentity
    ADD CONSTRAINT oidc_identity_issuer_subject UNIQUE (issuer, subject);


--
-- Name: scheduling_pod pod_unique_name; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.scheduling_pod
    ADD CONSTRAINT pod_unique_name UNIQUE (cluster_id, namespace_id, name);


--
-- Name: scheduling_podgroup podgroup_unique_name; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.scheduling_podgroup
    ADD CONSTRAINT podgroup_unique_name UNIQUE (cluster_id, namespace_id, name);


--
-- Name: scheduling_quotaoverstate quota_over_state_unique; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.scheduling_quotaoverstate
    ADD CONSTRAINT quota_over_state_unique UNIQUE (cluster_id, name);


--
-- Name: quotas_historicalnamespace quotas_historicalnamespace_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.quotas_historicalnamespace
    ADD CONSTRAINT quotas_historicalnamespace_pkey PRIMARY KEY (history_id);


--
-- Name: quotas_historicalqueue quotas_historicalqueue_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.quotas_historicalqueue
    ADD CONSTRAINT quotas_historicalqueue_pkey PRIMARY KEY (history_id);


--
-- Name: quotas_historicalqueue_teams quotas_historicalqueue_teams_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.quotas_historicalqueue_teams
    ADD CONSTRAINT quotas_historicalqueue_teams_pkey PRIMARY KEY (m2m_history_id);


--
-- Name: quotas_historicalquotagroup quotas_historicalquotagroup_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.quotas_historicalquotagroup
    ADD CONSTRAINT quotas_historicalquotagroup_pkey PRIMARY KEY (history_id);


--
-- Name: quotas_historicalquotagroup_teams quotas_historicalquotagroup_teams_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.quotas_historicalquotagroup_teams
    ADD CONSTRAINT quotas_historicalquotagroup_teams_pkey PRIMARY KEY (m2m_history_id);


--
-- Name: quotas_namespace quotas_namespace_name_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.quotas_namespace
    ADD CONSTRAINT quotas_namespace_name_key UNIQUE (name);


--
-- Name: quotas_namespace quotas_namespace_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.quotas_namespace
    ADD CONSTRAINT quotas_namespace_pkey PRIMARY KEY (id);


--
-- Name: quotas_queue quotas_queue_name_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.quotas_queue
    ADD CONSTRAINT quotas_queue_name_key UNIQUE (name);


--
-- Name: quotas_queue quotas_queue_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.quotas_queue
    ADD CONSTRAINT quotas_queue_pkey PRIMARY KEY (id);


--
-- Name: quotas_queue_teams quotas_queue_teams_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.quotas_queue_teams
    ADD CONSTRAINT quotas_queue_teams_pkey PRIMARY KEY (id);


--
-- Name: quotas_queue_teams quotas_queue_teams_queue_id_group_id_75606218_uniq; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.quotas_queue_teams
    ADD CONSTRAINT quotas_queue_teams_queue_id_group_id_75606218_uniq UNIQUE (queue_id, group_id);


--
-- Name: quotas_quotagroup quotas_quotagroup_name_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.quotas_quotagroup
    ADD CONSTRAINT quotas_quotagroup_name_key UNIQUE (name);


--
-- Name: quotas_quotagroup quotas_quotagroup_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.quotas_quotagroup
    ADD CONSTRAINT quotas_quotagroup_pkey PRIMARY KEY (id);


--
-- Name: quotas_quotagroup_teams quotas_quotagroup_teams_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.quotas_quotagroup_teams
    ADD CONSTRAINT quotas_quotagroup_teams_pkey PRIMARY KEY (id);


--
-- Name: quotas_quotagroup_teams quotas_quotagroup_teams_quotagroup_id_group_id_3c795c24_uniq; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.quotas_quotagroup_teams
    ADD CONSTRAINT quotas_quotagroup_teams_quotagroup_id_group_id_3c795c24_uniq UNIQUE (quotagroup_id, group_id);


--
-- Name: quotas_revision quotas_revision_key_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.quotas_revision
    ADD CONSTRAINT quotas_revision_key_key UNIQUE (key);


--
-- Name: quotas_revision quotas_revision_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.quotas_revision
    ADD CONSTRAINT quotas_revision_pkey PRIMARY KEY (id);


--
-- Name: scheduling_cluster scheduling_cluster_name_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.scheduling_cluster
    ADD CONSTRAINT scheduling_cluster_name_key UNIQUE (name);


--
-- Name: scheduling_cluster scheduling_cluster_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.scheduling_cluster
    ADD CONSTRAINT scheduling_cluster_pkey PRIMARY KEY (id);


--
-- Name: scheduling_clustercounters scheduling_clustercounters_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.scheduling_clustercounters
    ADD CONSTRAINT scheduling_clustercounters_pkey PRIMARY KEY (cluster_id);


--
-- Name: scheduling_clusterfeed scheduling_clusterfeed_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.scheduling_clusterfeed
    ADD CONSTRAINT scheduling_clusterfeed_pkey PRIMARY KEY (cluster_id);


--
-- Name: scheduling_clusterlease scheduling_clusterlease_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.scheduling_clusterlease
    ADD CONSTRAINT scheduling_clusterlease_pkey PRIMARY KEY (id);


--
-- Name: scheduling_eviction scheduling_eviction_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.scheduling_eviction
    ADD CONSTRAINT scheduling_eviction_pkey PRIMARY KEY (id);


--
-- Name: scheduling_jobrecord scheduling_jobrecord_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.scheduling_jobrecord
    ADD CONSTRAINT scheduling_jobrecord_pkey PRIMARY KEY (id);


--
-- Name: scheduling_kubeobjectproblem scheduling_kubeobjectproblem_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.scheduling_kubeobjectproblem
    ADD CONSTRAINT scheduling_kubeobjectproblem_pkey PRIMARY KEY (id);


--
-- Name: scheduling_node scheduling_node_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.scheduling_node
    ADD CONSTRAINT scheduling_node_pkey PRIMARY KEY (id);


--
-- Name: scheduling_nodeagentbinding scheduling_nodeagentbinding_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.scheduling_nodeagentbinding
    ADD CONSTRAINT scheduling_nodeagentbinding_pkey PRIMARY KEY (id);


--
-- Name: scheduling_pod scheduling_pod_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.scheduling_pod
    ADD CONSTRAINT scheduling_pod_pkey PRIMARY KEY (id);


--
-- Name: scheduling_podgroup scheduling_podgroup_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.scheduling_podgroup
    ADD CONSTRAINT scheduling_podgroup_pkey PRIMARY KEY (id);


--
-- Name: scheduling_podgroupreason scheduling_podgroupreason_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.scheduling_podgroupreason
    ADD CONSTRAINT scheduling_podgroupreason_pkey PRIMARY KEY (id);


--
-- Name: scheduling_quotaoverstate scheduling_quotaoverstate_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.scheduling_quotaoverstate
    ADD CONSTRAINT scheduling_quotaoverstate_pkey PRIMARY KEY (id);


--
-- Name: scheduling_quotasample scheduling_quotasample_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.scheduling_quotasample
    ADD CONSTRAINT scheduling_quotasample_pkey PRIMARY KEY (id);


--
-- Name: scheduling_removedjob scheduling_removedjob_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.scheduling_removedjob
    ADD CONSTRAINT scheduling_removedjob_pkey PRIMARY KEY (id);


--
-- Name: scheduling_rowchange scheduling_rowchange_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.scheduling_rowchange
    ADD CONSTRAINT scheduling_rowchange_pkey PRIMARY KEY (id);


--
-- Name: scheduling_schedulingsession scheduling_schedulingsession_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.scheduling_schedulingsession
    ADD CONSTRAINT scheduling_schedulingsession_pkey PRIMARY KEY (id);


--
-- Name: scheduling_usagehistory scheduling_usagehistory_cluster_id_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.scheduling_usagehistory
    ADD CONSTRAINT scheduling_usagehistory_cluster_id_key UNIQUE (cluster_id);


--
-- Name: scheduling_usagehistory scheduling_usagehistory_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.scheduling_usagehistory
    ADD CONSTRAINT scheduling_usagehistory_pkey PRIMARY KEY (id);


--
-- Name: security_apitoken security_apitoken_digest_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.security_apitoken
    ADD CONSTRAINT security_apitoken_digest_key UNIQUE (digest);


--
-- Name: security_apitoken security_apitoken_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.security_apitoken
    ADD CONSTRAINT security_apitoken_pkey PRIMARY KEY (id);


--
-- Name: security_securityevent security_securityevent_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.security_securityevent
    ADD CONSTRAINT security_securityevent_pkey PRIMARY KEY (id);


--
-- Name: auth_group_name_a6ea08ec_like; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX auth_group_name_a6ea08ec_like ON public.auth_group USING btree (name varchar_pattern_ops);


--
-- Name: auth_group_permissions_group_id_b120cbf9; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX auth_group_permissions_group_id_b120cbf9 ON public.auth_group_permissions USING btree (group_id);


--
-- Name: auth_group_permissions_permission_id_84c5c92e; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX auth_group_permissions_permission_id_84c5c92e ON public.auth_group_permissions USING btree (permission_id);


--
-- Name: auth_permission_content_type_id_2f476e4b; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX auth_permission_content_type_id_2f476e4b ON public.auth_permission USING btree (content_type_id);


--
-- Name: auth_user_groups_group_id_97559544; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX auth_user_groups_group_id_97559544 ON public.auth_user_groups USING btree (group_id);


--
-- Name: auth_user_groups_user_id_6a12ed8b; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX auth_user_groups_user_id_6a12ed8b ON public.auth_user_groups USING btree (user_id);


--
-- Name: auth_user_user_permissions_permission_id_1fbb5f2c; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX auth_user_user_permissions_permission_id_1fbb5f2c ON public.auth_user_user_permissions USING btree (permission_id);


--
-- Name: auth_user_user_permissions_user_id_a95ead1b; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX auth_user_user_permissions_user_id_a95ead1b ON public.auth_user_user_permissions USING btree (user_id);


--
-- Name: auth_user_username_6821ab7c_like; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX auth_user_username_6821ab7c_like ON public.auth_user USING btree (username varchar_pattern_ops);


--
-- Name: axes_accessattempt_ip_address_10922d9c; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX axes_accessattempt_ip_address_10922d9c ON public.axes_accessattempt USING btree (ip_address);


--
-- Name: axes_accessattempt_user_agent_ad89678b; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX axes_accessattempt_user_agent_ad89678b ON public.axes_accessattempt USING btree (user_agent);


--
-- Name: axes_accessattempt_user_agent_ad89678b_like; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX axes_accessattempt_user_agent_ad89678b_like ON public.axes_accessattempt USING btree (user_agent varchar_pattern_ops);


--
-- Name: axes_accessattempt_username_3f2d4ca0; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX axes_accessattempt_username_3f2d4ca0 ON public.axes_accessattempt USING btree (username);


--
-- Name: axes_accessattempt_username_3f2d4ca0_like; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX axes_accessattempt_username_3f2d4ca0_like ON public.axes_accessattempt USING btree (username varchar_pattern_ops);


--
-- Name: axes_accessfailurelog_ip_address_2e9f5a7f; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX axes_accessfailurelog_ip_address_2e9f5a7f ON public.axes_accessfailurelog USING btree (ip_address);


--
-- Name: axes_accessfailurelog_user_agent_ea145dda; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX axes_accessfailurelog_user_agent_ea145dda ON public.axes_accessfailurelog USING btree (user_agent);


--
-- Name: axes_accessfailurelog_user_agent_ea145dda_like; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX axes_accessfailurelog_user_agent_ea145dda_like ON public.axes_accessfailurelog USING btree (user_agent varchar_pattern_ops);


--
-- Name: axes_accessfailurelog_username_a8b7e8a4; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX axes_accessfailurelog_username_a8b7e8a4 ON public.axes_accessfailurelog USING btree (username);


--
-- Name: axes_accessfailurelog_username_a8b7e8a4_like; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX axes_accessfailurelog_username_a8b7e8a4_like ON public.axes_accessfailurelog USING btree (username varchar_pattern_ops);


--
-- Name: axes_accesslog_ip_address_86b417e5; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX axes_accesslog_ip_address_86b417e5 ON public.axes_accesslog USING btree (ip_address);


--
-- Name: axes_accesslog_user_agent_0e659004; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX axes_accesslog_user_agent_0e659004 ON public.axes_accesslog USING btree (user_agent);


--
-- Name: axes_accesslog_user_agent_0e659004_like; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX axes_accesslog_user_agent_0e659004_like ON public.axes_accesslog USING btree (user_agent varchar_pattern_ops);


--
-- Name: axes_accesslog_username_df93064b; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX axes_accesslog_username_df93064b ON public.axes_accesslog USING btree (username);


--
-- Name: axes_accesslog_username_df93064b_like; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX axes_accesslog_username_df93064b_like ON public.axes_accesslog USING btree (username varchar_pattern_ops);


--
-- Name: changereque_status_6330e4_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX changereque_status_6330e4_idx ON public.changerequests_changerequest USING btree (status, created DESC);


--
-- Name: changerequests_changerequest_requester_id_b6708ae4; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX changerequests_changerequest_requester_id_b6708ae4 ON public.changerequests_changerequest USING btree (requester_id);


--
-- Name: changerequests_changerequest_reviewer_id_6d6b35fd; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX changerequests_changerequest_reviewer_id_6d6b35fd ON public.changerequests_changerequest USING btree (reviewer_id);


--
-- Name: changerequests_historicalchangerequest_history_date_b54fd7ae; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX changerequests_historicalchangerequest_history_date_b54fd7ae ON public.changerequests_historicalchangerequest USING btree (history_date);


--
-- Name: changerequests_historicalchangerequest_history_user_id_2477d9c9; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX changerequests_historicalchangerequest_history_user_id_2477d9c9 ON public.changerequests_historicalchangerequest USING btree (history_user_id);


--
-- Name: changerequests_historicalchangerequest_id_d153889a; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX changerequests_historicalchangerequest_id_d153889a ON public.changerequests_historicalchangerequest USING btree (id);


--
-- Name: changerequests_historicalchangerequest_requester_id_63a817d3; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX changerequests_historicalchangerequest_requester_id_63a817d3 ON public.changerequests_historicalchangerequest USING btree (requester_id);


--
-- Name: changerequests_historicalchangerequest_reviewer_id_95a0cc87; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX changerequests_historicalchangerequest_reviewer_id_95a0cc87 ON public.changerequests_historicalchangerequest USING btree (reviewer_id);


--
-- Name: django_admin_log_content_type_id_c4bce8eb; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX django_admin_log_content_type_id_c4bce8eb ON public.django_admin_log USING btree (content_type_id);


--
-- Name: django_admin_log_user_id_c564eba6; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX django_admin_log_user_id_c564eba6 ON public.django_admin_log USING btree (user_id);


--
-- Name: django_celery_beat_periodictask_clocked_id_47a69f82; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX django_celery_beat_periodictask_clocked_id_47a69f82 ON public.django_celery_beat_periodictask USING btree (clocked_id);


--
-- Name: django_celery_beat_periodictask_crontab_id_d3cba168; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX django_celery_beat_periodictask_crontab_id_d3cba168 ON public.django_celery_beat_periodictask USING btree (crontab_id);


--
-- Name: django_celery_beat_periodictask_interval_id_a8ca27da; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX django_celery_beat_periodictask_interval_id_a8ca27da ON public.django_celery_beat_periodictask USING btree (interval_id);


--
-- Name: django_celery_beat_periodictask_name_265a36b7_like; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX django_celery_beat_periodictask_name_265a36b7_like ON public.django_celery_beat_periodictask USING btree (name varchar_pattern_ops);


--
-- Name: django_celery_beat_periodictask_solar_id_a87ce72c; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX django_celery_beat_periodictask_solar_id_a87ce72c ON public.django_celery_beat_periodictask USING btree (solar_id);


--
-- Name: django_session_expire_date_a5c62663; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX django_session_expire_date_a5c62663 ON public.django_session USING btree (expire_date);


--
-- Name: django_session_session_key_c0390e0f_like; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX django_session_session_key_c0390e0f_like ON public.django_session USING btree (session_key varchar_pattern_ops);


--
-- Name: quotas_historicalnamespace_default_queue_id_ec6f38a7; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX quotas_historicalnamespace_default_queue_id_ec6f38a7 ON public.quotas_historicalnamespace USING btree (default_queue_id);


--
-- Name: quotas_historicalnamespace_history_date_9d83a265; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX quotas_historicalnamespace_history_date_9d83a265 ON public.quotas_historicalnamespace USING btree (history_date);


--
-- Name: quotas_historicalnamespace_history_user_id_edd95bd5; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX quotas_historicalnamespace_history_user_id_edd95bd5 ON public.quotas_historicalnamespace USING btree (history_user_id);


--
-- Name: quotas_historicalnamespace_id_f5eb5e4c; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX quotas_historicalnamespace_id_f5eb5e4c ON public.quotas_historicalnamespace USING btree (id);


--
-- Name: quotas_historicalnamespace_name_7af2dce0; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX quotas_historicalnamespace_name_7af2dce0 ON public.quotas_historicalnamespace USING btree (name);


--
-- Name: quotas_historicalnamespace_name_7af2dce0_like; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX quotas_historicalnamespace_name_7af2dce0_like ON public.quotas_historicalnamespace USING btree (name varchar_pattern_ops);


--
-- Name: quotas_historicalnamespace_quota_group_id_05a24466; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX quotas_historicalnamespace_quota_group_id_05a24466 ON public.quotas_historicalnamespace USING btree (quota_group_id);


--
-- Name: quotas_historicalqueue_history_date_10c05a5e; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX quotas_historicalqueue_history_date_10c05a5e ON public.quotas_historicalqueue USING btree (history_date);


--
-- Name: quotas_historicalqueue_history_user_id_ce296e99; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX quotas_historicalqueue_history_user_id_ce296e99 ON public.quotas_historicalqueue USING btree (history_user_id);


--
-- Name: quotas_historicalqueue_id_caa6b6a5; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX quotas_historicalqueue_id_caa6b6a5 ON public.quotas_historicalqueue USING btree (id);


--
-- Name: quotas_historicalqueue_name_e6b096f8; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX quotas_historicalqueue_name_e6b096f8 ON public.quotas_historicalqueue USING btree (name);


--
-- Name: quotas_historicalqueue_name_e6b096f8_like; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX quotas_historicalqueue_name_e6b096f8_like ON public.quotas_historicalqueue USING btree (name varchar_pattern_ops);


--
-- Name: quotas_historicalqueue_parent_id_53bd026d; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX quotas_historicalqueue_parent_id_53bd026d ON public.quotas_historicalqueue USING btree (parent_id);


--
-- Name: quotas_historicalqueue_teams_group_id_5a53eadb; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX quotas_historicalqueue_teams_group_id_5a53eadb ON public.quotas_historicalqueue_teams USING btree (group_id);


--
-- Name: quotas_historicalqueue_teams_history_id_88e4f40a; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX quotas_historicalqueue_teams_history_id_88e4f40a ON public.quotas_historicalqueue_teams USING btree (history_id);


--
-- Name: quotas_historicalqueue_teams_id_501a83fa; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX quotas_historicalqueue_teams_id_501a83fa ON public.quotas_historicalqueue_teams USING btree (id);


--
-- Name: quotas_historicalqueue_teams_queue_id_364eff66; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX quotas_historicalqueue_teams_queue_id_364eff66 ON public.quotas_historicalqueue_teams USING btree (queue_id);


--
-- Name: quotas_historicalquotagroup_history_date_f6da00ea; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX quotas_historicalquotagroup_history_date_f6da00ea ON public.quotas_historicalquotagroup USING btree (history_date);


--
-- Name: quotas_historicalquotagroup_history_user_id_9caf3248; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX quotas_historicalquotagroup_history_user_id_9caf3248 ON public.quotas_historicalquotagroup USING btree (history_user_id);


--
-- Name: quotas_historicalquotagroup_id_208934b3; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX quotas_historicalquotagroup_id_208934b3 ON public.quotas_historicalquotagroup USING btree (id);


--
-- Name: quotas_historicalquotagroup_name_55f9d5cf; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX quotas_historicalquotagroup_name_55f9d5cf ON public.quotas_historicalquotagroup USING btree (name);


--
-- Name: quotas_historicalquotagroup_name_55f9d5cf_like; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX quotas_historicalquotagroup_name_55f9d5cf_like ON public.quotas_historicalquotagroup USING btree (name varchar_pattern_ops);


--
-- Name: quotas_historicalquotagroup_parent_id_4e02eab7; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX quotas_historicalquotagroup_parent_id_4e02eab7 ON public.quotas_historicalquotagroup USING btree (parent_id);


--
-- Name: quotas_historicalquotagroup_teams_group_id_086ba196; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX quotas_historicalquotagroup_teams_group_id_086ba196 ON public.quotas_historicalquotagroup_teams USING btree (group_id);


--
-- Name: quotas_historicalquotagroup_teams_history_id_0fd1a825; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX quotas_historicalquotagroup_teams_history_id_0fd1a825 ON public.quotas_historicalquotagroup_teams USING btree (history_id);


--
-- Name: quotas_historicalquotagroup_teams_id_3c022e8e; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX quotas_historicalquotagroup_teams_id_3c022e8e ON public.quotas_historicalquotagroup_teams USING btree (id);


--
-- Name: quotas_historicalquotagroup_teams_quotagroup_id_ed8824a6; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX quotas_historicalquotagroup_teams_quotagroup_id_ed8824a6 ON public.quotas_historicalquotagroup_teams USING btree (quotagroup_id);


--
-- Name: quotas_namespace_default_queue_id_80357e4f; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX quotas_namespace_default_queue_id_80357e4f ON public.quotas_namespace USING btree (default_queue_id);


--
-- Name: quotas_namespace_name_3f0b112a_like; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX quotas_namespace_name_3f0b112a_like ON public.quotas_namespace USING btree (name varchar_pattern_ops);


--
-- Name: quotas_namespace_quota_group_id_38c12256; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX quotas_namespace_quota_group_id_38c12256 ON public.quotas_namespace USING btree (quota_group_id);


--
-- Name: quotas_queue_name_90077d9e_like; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX quotas_queue_name_90077d9e_like ON public.quotas_queue USING btree (name varchar_pattern_ops);


--
-- Name: quotas_queue_parent_id_6c08ef00; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX quotas_queue_parent_id_6c08ef00 ON public.quotas_queue USING btree (parent_id);


--
-- Name: quotas_queue_teams_group_id_f32263c3; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX quotas_queue_teams_group_id_f32263c3 ON public.quotas_queue_teams USING btree (group_id);


--
-- Name: quotas_queue_teams_queue_id_7edba7f6; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX quotas_queue_teams_queue_id_7edba7f6 ON public.quotas_queue_teams USING btree (queue_id);


--
-- Name: quotas_quotagroup_name_4e7b8e53_like; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX quotas_quotagroup_name_4e7b8e53_like ON public.quotas_quotagroup USING btree (name varchar_pattern_ops);


--
-- Name: quotas_quotagroup_parent_id_c45ce798; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX quotas_quotagroup_parent_id_c45ce798 ON public.quotas_quotagroup USING btree (parent_id);


--
-- Name: quotas_quotagroup_teams_group_id_70fb5d2c; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX quotas_quotagroup_teams_group_id_70fb5d2c ON public.quotas_quotagroup_teams USING btree (group_id);


--
-- Name: quotas_quotagroup_teams_quotagroup_id_cfb14f14; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX quotas_quotagroup_teams_quotagroup_id_cfb14f14 ON public.quotas_quotagroup_teams USING btree (quotagroup_id);


--
-- Name: quotas_revision_key_fa8ee4cb_like; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX quotas_revision_key_fa8ee4cb_like ON public.quotas_revision USING btree (key varchar_pattern_ops);


--
-- Name: rowchange_cluster_rev; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX rowchange_cluster_rev ON public.scheduling_rowchange USING btree (cluster_id, rev);


--
-- Name: scheduling__cluster_001685_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX scheduling__cluster_001685_idx ON public.scheduling_jobrecord USING btree (cluster_id, submitted);


--
-- Name: scheduling__cluster_0939e7_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX scheduling__cluster_0939e7_idx ON public.scheduling_quotasample USING btree (cluster_id, kind, name, "time");


--
-- Name: scheduling__cluster_0e5754_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX scheduling__cluster_0e5754_idx ON public.scheduling_removedjob USING btree (cluster_id, removed_at);


--
-- Name: scheduling__cluster_782efb_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX scheduling__cluster_782efb_idx ON public.scheduling_schedulingsession USING btree (cluster_id, started);


--
-- Name: scheduling__cluster_d42305_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX scheduling__cluster_d42305_idx ON public.scheduling_eviction USING btree (cluster_id, created);


--
-- Name: scheduling__cluster_d86d23_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX scheduling__cluster_d86d23_idx ON public.scheduling_removedjob USING btree (cluster_id, namespace, name, removed_at);


--
-- Name: scheduling__node_id_74749c_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX scheduling__node_id_74749c_idx ON public.scheduling_pod USING btree (node_id, status);


--
-- Name: scheduling__podgrou_21e5f4_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX scheduling__podgrou_21e5f4_idx ON public.scheduling_podgroupreason USING btree (podgroup_id, "time");


--
-- Name: scheduling__queue_8dcd59_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX scheduling__queue_8dcd59_idx ON public.scheduling_eviction USING btree (queue, created);


--
-- Name: scheduling__queue_i_f85c36_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX scheduling__queue_i_f85c36_idx ON public.scheduling_podgroup USING btree (queue_id, phase);


--
-- Name: scheduling__quota_g_034142_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX scheduling__quota_g_034142_idx ON public.scheduling_eviction USING btree (quota_group, created);


--
-- Name: scheduling__status_8f7e15_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX scheduling__status_8f7e15_idx ON public.scheduling_schedulingsession USING btree (status, started);


--
-- Name: scheduling__status_dbe857_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX scheduling__status_dbe857_idx ON public.scheduling_pod USING btree (status);


--
-- Name: scheduling__time_97e6a0_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX scheduling__time_97e6a0_idx ON public.scheduling_quotasample USING btree ("time");


--
-- Name: scheduling_cluster_name_cc766604_like; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX scheduling_cluster_name_cc766604_like ON public.scheduling_cluster USING btree (name varchar_pattern_ops);


--
-- Name: scheduling_clusterlease_cluster_id_e96060cb; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX scheduling_clusterlease_cluster_id_e96060cb ON public.scheduling_clusterlease USING btree (cluster_id);


--
-- Name: scheduling_eviction_cluster_id_4a22d7fd; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX scheduling_eviction_cluster_id_4a22d7fd ON public.scheduling_eviction USING btree (cluster_id);


--
-- Name: scheduling_eviction_pod_id_5d156d13; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX scheduling_eviction_pod_id_5d156d13 ON public.scheduling_eviction USING btree (pod_id);


--
-- Name: scheduling_eviction_removed_job_id_5dab40be; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX scheduling_eviction_removed_job_id_5dab40be ON public.scheduling_eviction USING btree (removed_job_id);


--
-- Name: scheduling_eviction_session_id_5a05da69; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX scheduling_eviction_session_id_5a05da69 ON public.scheduling_eviction USING btree (session_id);


--
-- Name: scheduling_jobrecord_cluster_id_ee55630d; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX scheduling_jobrecord_cluster_id_ee55630d ON public.scheduling_jobrecord USING btree (cluster_id);


--
-- Name: scheduling_kubeobjectproblem_cluster_id_a7ed0739; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX scheduling_kubeobjectproblem_cluster_id_a7ed0739 ON public.scheduling_kubeobjectproblem USING btree (cluster_id);


--
-- Name: scheduling_node_cluster_id_bee1a5e7; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX scheduling_node_cluster_id_bee1a5e7 ON public.scheduling_node USING btree (cluster_id);


--
-- Name: scheduling_node_pool_f5bb9c7f; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX scheduling_node_pool_f5bb9c7f ON public.scheduling_node USING btree (pool);


--
-- Name: scheduling_node_pool_f5bb9c7f_like; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX scheduling_node_pool_f5bb9c7f_like ON public.scheduling_node USING btree (pool varchar_pattern_ops);


--
-- Name: scheduling_nodeagentbinding_cluster_id_8abf5ffc; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX scheduling_nodeagentbinding_cluster_id_8abf5ffc ON public.scheduling_nodeagentbinding USING btree (cluster_id);


--
-- Name: scheduling_nodeagentbinding_user_id_4dcc88bd; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX scheduling_nodeagentbinding_user_id_4dcc88bd ON public.scheduling_nodeagentbinding USING btree (user_id);


--
-- Name: scheduling_pod_podgroup_id_acf05674; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX scheduling_pod_podgroup_id_acf05674 ON public.scheduling_pod USING btree (podgroup_id);


--
-- Name: scheduling_podgroup_cluster_id_8d3f819e; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX scheduling_podgroup_cluster_id_8d3f819e ON public.scheduling_podgroup USING btree (cluster_id);


--
-- Name: scheduling_podgroup_namespace_id_92c8c32e; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX scheduling_podgroup_namespace_id_92c8c32e ON public.scheduling_podgroup USING btree (namespace_id);


--
-- Name: scheduling_podgroup_queue_id_0d5d662b; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX scheduling_podgroup_queue_id_0d5d662b ON public.scheduling_podgroup USING btree (queue_id);


--
-- Name: scheduling_podgroupreason_podgroup_id_cbe06a8e; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX scheduling_podgroupreason_podgroup_id_cbe06a8e ON public.scheduling_podgroupreason USING btree (podgroup_id);


--
-- Name: scheduling_podgroupreason_session_id_157ab281; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX scheduling_podgroupreason_session_id_157ab281 ON public.scheduling_podgroupreason USING btree (session_id);


--
-- Name: scheduling_quotaoverstate_cluster_id_ba5302c3; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX scheduling_quotaoverstate_cluster_id_ba5302c3 ON public.scheduling_quotaoverstate USING btree (cluster_id);


--
-- Name: scheduling_quotasample_cluster_id_c4ab22ce; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX scheduling_quotasample_cluster_id_c4ab22ce ON public.scheduling_quotasample USING btree (cluster_id);


--
-- Name: scheduling_removedjob_cluster_id_063d46a8; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX scheduling_removedjob_cluster_id_063d46a8 ON public.scheduling_removedjob USING btree (cluster_id);


--
-- Name: scheduling_schedulingsession_cluster_id_53fbe80c; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX scheduling_schedulingsession_cluster_id_53fbe80c ON public.scheduling_schedulingsession USING btree (cluster_id);


--
-- Name: security_apitoken_digest_74d4208d_like; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX security_apitoken_digest_74d4208d_like ON public.security_apitoken USING btree (digest varchar_pattern_ops);


--
-- Name: security_apitoken_prefix_fd0e2e40; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX security_apitoken_prefix_fd0e2e40 ON public.security_apitoken USING btree (prefix);


--
-- Name: security_apitoken_prefix_fd0e2e40_like; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX security_apitoken_prefix_fd0e2e40_like ON public.security_apitoken USING btree (prefix varchar_pattern_ops);


--
-- Name: security_apitoken_user_id_18651329; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX security_apitoken_user_id_18651329 ON public.security_apitoken USING btree (user_id);


--
-- Name: security_event_kind_time; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX security_event_kind_time ON public.security_securityevent USING btree (kind, "time" DESC);


--
-- Name: security_securityevent_actor_2a3503af; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX security_securityevent_actor_2a3503af ON public.security_securityevent USING btree (actor);


--
-- Name: security_securityevent_actor_2a3503af_like; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX security_securityevent_actor_2a3503af_like ON public.security_securityevent USING btree (actor varchar_pattern_ops);


--
-- Name: security_securityevent_kind_1d7bca1f; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX security_securityevent_kind_1d7bca1f ON public.security_securityevent USING btree (kind);


--
-- Name: security_securityevent_kind_1d7bca1f_like; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX security_securityevent_kind_1d7bca1f_like ON public.security_securityevent USING btree (kind varchar_pattern_ops);


--
-- Name: security_securityevent_time_8d63e33b; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX security_securityevent_time_8d63e33b ON public.security_securityevent USING btree ("time");


--
-- Name: scheduling_node fairway_feed_scheduling_node_delete; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER fairway_feed_scheduling_node_delete AFTER DELETE ON public.scheduling_node REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION public.fairway_feed_scheduling_node_delete();


--
-- Name: scheduling_node fairway_feed_scheduling_node_insert; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER fairway_feed_scheduling_node_insert AFTER INSERT ON public.scheduling_node REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION public.fairway_feed_scheduling_node_insert();


--
-- Name: scheduling_node fairway_feed_scheduling_node_update; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER fairway_feed_scheduling_node_update AFTER UPDATE ON public.scheduling_node REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION public.fairway_feed_scheduling_node_update();


--
-- Name: scheduling_pod fairway_feed_scheduling_pod_delete; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER fairway_feed_scheduling_pod_delete AFTER DELETE ON public.scheduling_pod REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION public.fairway_feed_scheduling_pod_delete();


--
-- Name: scheduling_pod fairway_feed_scheduling_pod_insert; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER fairway_feed_scheduling_pod_insert AFTER INSERT ON public.scheduling_pod REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION public.fairway_feed_scheduling_pod_insert();


--
-- Name: scheduling_pod fairway_feed_scheduling_pod_update; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER fairway_feed_scheduling_pod_update AFTER UPDATE ON public.scheduling_pod REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION public.fairway_feed_scheduling_pod_update();


--
-- Name: scheduling_podgroup fairway_feed_scheduling_podgroup_delete; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER fairway_feed_scheduling_podgroup_delete AFTER DELETE ON public.scheduling_podgroup REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION public.fairway_feed_scheduling_podgroup_delete();


--
-- Name: scheduling_podgroup fairway_feed_scheduling_podgroup_insert; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER fairway_feed_scheduling_podgroup_insert AFTER INSERT ON public.scheduling_podgroup REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION public.fairway_feed_scheduling_podgroup_insert();


--
-- Name: scheduling_podgroup fairway_feed_scheduling_podgroup_update; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER fairway_feed_scheduling_podgroup_update AFTER UPDATE ON public.scheduling_podgroup REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION public.fairway_feed_scheduling_podgroup_update();


--
-- Name: auth_group_permissions auth_group_permissio_permission_id_84c5c92e_fk_auth_perm; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.auth_group_permissions
    ADD CONSTRAINT auth_group_permissio_permission_id_84c5c92e_fk_auth_perm FOREIGN KEY (permission_id) REFERENCES public.auth_permission(id) DEFERRABLE INITIALLY DEFERRED;


--
-- Name: auth_group_permissions auth_group_permissions_group_id_b120cbf9_fk_auth_group_id; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.auth_group_permissions
    ADD CONSTRAINT auth_group_permissions_group_id_b120cbf9_fk_auth_group_id FOREIGN KEY (group_id) REFERENCES public.auth_group(id) DEFERRABLE INITIALLY DEFERRED;


--
-- Name: auth_permission auth_permission_content_type_id_2f476e4b_fk_django_co; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.auth_permission
    ADD CONSTRAINT auth_permission_content_type_id_2f476e4b_fk_django_co FOREIGN KEY (content_type_id) REFERENCES public.django_content_type(id) DEFERRABLE INITIALLY DEFERRED;


--
-- Name: auth_user_groups auth_user_groups_group_id_97559544_fk_auth_group_id; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.auth_user_groups
    ADD CONSTRAINT auth_user_groups_group_id_97559544_fk_auth_group_id FOREIGN KEY (group_id) REFERENCES public.auth_group(id) DEFERRABLE INITIALLY DEFERRED;


--
-- Name: auth_user_groups auth_user_groups_user_id_6a12ed8b_fk_auth_user_id; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.auth_user_groups
    ADD CONSTRAINT auth_user_groups_user_id_6a12ed8b_fk_auth_user_id FOREIGN KEY (user_id) REFERENCES public.auth_user(id) DEFERRABLE INITIALLY DEFERRED;


--
-- Name: auth_user_user_permissions auth_user_user_permi_permission_id_1fbb5f2c_fk_auth_perm; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.auth_user_user_permissions
    ADD CONSTRAINT auth_user_user_permi_permission_id_1fbb5f2c_fk_auth_perm FOREIGN KEY (permission_id) REFERENCES public.auth_permission(id) DEFERRABLE INITIALLY DEFERRED;


--
-- Name: auth_user_user_permissions auth_user_user_permissions_user_id_a95ead1b_fk_auth_user_id; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.auth_user_user_permissions
    ADD CONSTRAINT auth_user_user_permissions_user_id_a95ead1b_fk_auth_user_id FOREIGN KEY (user_id) REFERENCES public.auth_user(id) DEFERRABLE INITIALLY DEFERRED;


--
-- Name: axes_accessattemptexpiration axes_accessattemptex_access_attempt_id_6b73a47a_fk_axes_acce; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.axes_accessattemptexpiration
    ADD CONSTRAINT axes_accessattemptex_access_attempt_id_6b73a47a_fk_axes_acce FOREIGN KEY (access_attempt_id) REFERENCES public.axes_accessattempt(id) DEFERRABLE INITIALLY DEFERRED;


--
-- Name: changerequests_changerequest changerequests_chang_requester_id_b6708ae4_fk_auth_user; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.changerequests_changerequest
    ADD CONSTRAINT changerequests_chang_requester_id_b6708ae4_fk_auth_user FOREIGN KEY (requester_id) REFERENCES public.auth_user(id) DEFERRABLE INITIALLY DEFERRED;


--
-- Name: changerequests_changerequest changerequests_chang_reviewer_id_6d6b35fd_fk_auth_user; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.changerequests_changerequest
    ADD CONSTRAINT changerequests_chang_reviewer_id_6d6b35fd_fk_auth_user FOREIGN KEY (reviewer_id) REFERENCES public.auth_user(id) DEFERRABLE INITIALLY DEFERRED;


--
-- Name: changerequests_historicalchangerequest changerequests_histo_history_user_id_2477d9c9_fk_auth_user; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.changerequests_historicalchangerequest
    ADD CONSTRAINT changerequests_histo_history_user_id_2477d9c9_fk_auth_user FOREIGN KEY (history_user_id) REFERENCES public.auth_user(id) DEFERRABLE INITIALLY DEFERRED;


--
-- Name: django_admin_log django_admin_log_content_type_id_c4bce8eb_fk_django_co; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.django_admin_log
    ADD CONSTRAINT django_admin_log_content_type_id_c4bce8eb_fk_django_co FOREIGN KEY (content_type_id) REFERENCES public.django_content_type(id) DEFERRABLE INITIALLY DEFERRED;


--
-- Name: django_admin_log django_admin_log_user_id_c564eba6_fk_auth_user_id; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.django_admin_log
    ADD CONSTRAINT django_admin_log_user_id_c564eba6_fk_auth_user_id FOREIGN KEY (user_id) REFERENCES public.auth_user(id) DEFERRABLE INITIALLY DEFERRED;


--
-- Name: django_celery_beat_periodictask django_celery_beat_p_clocked_id_47a69f82_fk_django_ce; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.django_celery_beat_periodictask
    ADD CONSTRAINT django_celery_beat_p_clocked_id_47a69f82_fk_django_ce FOREIGN KEY (clocked_id) REFERENCES public.django_celery_beat_clockedschedule(id) DEFERRABLE INITIALLY DEFERRED;


--
-- Name: django_celery_beat_periodictask django_celery_beat_p_crontab_id_d3cba168_fk_django_ce; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.django_celery_beat_periodictask
    ADD CONSTRAINT django_celery_beat_p_crontab_id_d3cba168_fk_django_ce FOREIGN KEY (crontab_id) REFERENCES public.django_celery_beat_crontabschedule(id) DEFERRABLE INITIALLY DEFERRED;


--
-- Name: django_celery_beat_periodictask django_celery_beat_p_interval_id_a8ca27da_fk_django_ce; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.django_celery_beat_periodictask
    ADD CONSTRAINT django_celery_beat_p_interval_id_a8ca27da_fk_django_ce FOREIGN KEY (interval_id) REFERENCES public.django_celery_beat_intervalschedule(id) DEFERRABLE INITIALLY DEFERRED;


--
-- Name: django_celery_beat_periodictask django_celery_beat_p_solar_id_a87ce72c_fk_django_ce; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.django_celery_beat_periodictask
    ADD CONSTRAINT django_celery_beat_p_solar_id_a87ce72c_fk_django_ce FOREIGN KEY (solar_id) REFERENCES public.django_celery_beat_solarschedule(id) DEFERRABLE INITIALLY DEFERRED;


--
-- Name: identity_oidcidentity identity_oidcidentity_user_id_67cf6a60_fk_auth_user_id; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.identity_oidcidentity
    ADD CONSTRAINT identity_oidcidentity_user_id_67cf6a60_fk_auth_user_id FOREIGN KEY (user_id) REFERENCES public.auth_user(id) DEFERRABLE INITIALLY DEFERRED;


--
-- Name: quotas_historicalnamespace quotas_historicalnam_history_user_id_edd95bd5_fk_auth_user; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.quotas_historicalnamespace
    ADD CONSTRAINT quotas_historicalnam_history_user_id_edd95bd5_fk_auth_user FOREIGN KEY (history_user_id) REFERENCES public.auth_user(id) DEFERRABLE INITIALLY DEFERRED;


--
-- Name: quotas_historicalqueue quotas_historicalqueue_history_user_id_ce296e99_fk_auth_user_id; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.quotas_historicalqueue
    ADD CONSTRAINT quotas_historicalqueue_history_user_id_ce296e99_fk_auth_user_id FOREIGN KEY (history_user_id) REFERENCES public.auth_user(id) DEFERRABLE INITIALLY DEFERRED;


--
-- Name: quotas_historicalquotagroup quotas_historicalquo_history_user_id_9caf3248_fk_auth_user; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.quotas_historicalquotagroup
    ADD CONSTRAINT quotas_historicalquo_history_user_id_9caf3248_fk_auth_user FOREIGN KEY (history_user_id) REFERENCES public.auth_user(id) DEFERRABLE INITIALLY DEFERRED;


--
-- Name: quotas_namespace quotas_namespace_default_queue_id_80357e4f_fk_quotas_queue_id; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.quotas_namespace
    ADD CONSTRAINT quotas_namespace_default_queue_id_80357e4f_fk_quotas_queue_id FOREIGN KEY (default_queue_id) REFERENCES public.quotas_queue(id) DEFERRABLE INITIALLY DEFERRED;


--
-- Name: quotas_namespace quotas_namespace_quota_group_id_38c12256_fk_quotas_qu; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.quotas_namespace
    ADD CONSTRAINT quotas_namespace_quota_group_id_38c12256_fk_quotas_qu FOREIGN KEY (quota_group_id) REFERENCES public.quotas_quotagroup(id) DEFERRABLE INITIALLY DEFERRED;


--
-- Name: quotas_queue quotas_queue_parent_id_6c08ef00_fk_quotas_queue_id; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.quotas_queue
    ADD CONSTRAINT quotas_queue_parent_id_6c08ef00_fk_quotas_queue_id FOREIGN KEY (parent_id) REFERENCES public.quotas_queue(id) DEFERRABLE INITIALLY DEFERRED;


--
-- Name: quotas_queue_teams quotas_queue_teams_group_id_f32263c3_fk_auth_group_id; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.quotas_queue_teams
    ADD CONSTRAINT quotas_queue_teams_group_id_f32263c3_fk_auth_group_id FOREIGN KEY (group_id) REFERENCES public.auth_group(id) DEFERRABLE INITIALLY DEFERRED;


--
-- Name: quotas_queue_teams quotas_queue_teams_queue_id_7edba7f6_fk_quotas_queue_id; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.quotas_queue_teams
    ADD CONSTRAINT quotas_queue_teams_queue_id_7edba7f6_fk_quotas_queue_id FOREIGN KEY (queue_id) REFERENCES public.quotas_queue(id) DEFERRABLE INITIALLY DEFERRED;


--
-- Name: quotas_quotagroup quotas_quotagroup_parent_id_c45ce798_fk_quotas_quotagroup_id; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.quotas_quotagroup
    ADD CONSTRAINT quotas_quotagroup_parent_id_c45ce798_fk_quotas_quotagroup_id FOREIGN KEY (parent_id) REFERENCES public.quotas_quotagroup(id) DEFERRABLE INITIALLY DEFERRED;


--
-- Name: quotas_quotagroup_teams quotas_quotagroup_te_quotagroup_id_cfb14f14_fk_quotas_qu; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.quotas_quotagroup_teams
    ADD CONSTRAINT quotas_quotagroup_te_quotagroup_id_cfb14f14_fk_quotas_qu FOREIGN KEY (quotagroup_id) REFERENCES public.quotas_quotagroup(id) DEFERRABLE INITIALLY DEFERRED;


--
-- Name: quotas_quotagroup_teams quotas_quotagroup_teams_group_id_70fb5d2c_fk_auth_group_id; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.quotas_quotagroup_teams
    ADD CONSTRAINT quotas_quotagroup_teams_group_id_70fb5d2c_fk_auth_group_id FOREIGN KEY (group_id) REFERENCES public.auth_group(id) DEFERRABLE INITIALLY DEFERRED;


--
-- Name: scheduling_clustercounters scheduling_clusterco_cluster_id_e6ad31ac_fk_schedulin; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.scheduling_clustercounters
    ADD CONSTRAINT scheduling_clusterco_cluster_id_e6ad31ac_fk_schedulin FOREIGN KEY (cluster_id) REFERENCES public.scheduling_cluster(id) DEFERRABLE INITIALLY DEFERRED;


--
-- Name: scheduling_clusterfeed scheduling_clusterfe_cluster_id_73193066_fk_schedulin; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.scheduling_clusterfeed
    ADD CONSTRAINT scheduling_clusterfe_cluster_id_73193066_fk_schedulin FOREIGN KEY (cluster_id) REFERENCES public.scheduling_cluster(id) DEFERRABLE INITIALLY DEFERRED;


--
-- Name: scheduling_clusterlease scheduling_clusterle_cluster_id_e96060cb_fk_schedulin; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.scheduling_clusterlease
    ADD CONSTRAINT scheduling_clusterle_cluster_id_e96060cb_fk_schedulin FOREIGN KEY (cluster_id) REFERENCES public.scheduling_cluster(id) DEFERRABLE INITIALLY DEFERRED;


--
-- Name: scheduling_eviction scheduling_eviction_cluster_id_4a22d7fd_fk_schedulin; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.scheduling_eviction
    ADD CONSTRAINT scheduling_eviction_cluster_id_4a22d7fd_fk_schedulin FOREIGN KEY (cluster_id) REFERENCES public.scheduling_cluster(id) DEFERRABLE INITIALLY DEFERRED;


--
-- Name: scheduling_eviction scheduling_eviction_pod_id_5d156d13_fk_scheduling_pod_id; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.scheduling_eviction
    ADD CONSTRAINT scheduling_eviction_pod_id_5d156d13_fk_scheduling_pod_id FOREIGN KEY (pod_id) REFERENCES public.scheduling_pod(id) DEFERRABLE INITIALLY DEFERRED;


--
-- Name: scheduling_eviction scheduling_eviction_removed_job_id_5dab40be_fk_schedulin; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.scheduling_eviction
    ADD CONSTRAINT scheduling_eviction_removed_job_id_5dab40be_fk_schedulin FOREIGN KEY (removed_job_id) REFERENCES public.scheduling_removedjob(id) DEFERRABLE INITIALLY DEFERRED;


--
-- Name: scheduling_eviction scheduling_eviction_session_id_5a05da69_fk_schedulin; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.scheduling_eviction
    ADD CONSTRAINT scheduling_eviction_session_id_5a05da69_fk_schedulin FOREIGN KEY (session_id) REFERENCES public.scheduling_schedulingsession(id) DEFERRABLE INITIALLY DEFERRED;


--
-- Name: scheduling_jobrecord scheduling_jobrecord_cluster_id_ee55630d_fk_schedulin; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.scheduling_jobrecord
    ADD CONSTRAINT scheduling_jobrecord_cluster_id_ee55630d_fk_schedulin FOREIGN KEY (cluster_id) REFERENCES public.scheduling_cluster(id) DEFERRABLE INITIALLY DEFERRED;


--
-- Name: scheduling_kubeobjectproblem scheduling_kubeobjec_cluster_id_a7ed0739_fk_schedulin; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.scheduling_kubeobjectproblem
    ADD CONSTRAINT scheduling_kubeobjec_cluster_id_a7ed0739_fk_schedulin FOREIGN KEY (cluster_id) REFERENCES public.scheduling_cluster(id) DEFERRABLE INITIALLY DEFERRED;


--
-- Name: scheduling_node scheduling_node_cluster_id_bee1a5e7_fk_scheduling_cluster_id; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.scheduling_node
    ADD CONSTRAINT scheduling_node_cluster_id_bee1a5e7_fk_scheduling_cluster_id FOREIGN KEY (cluster_id) REFERENCES public.scheduling_cluster(id) DEFERRABLE INITIALLY DEFERRED;


--
-- Name: scheduling_nodeagentbinding scheduling_nodeagent_cluster_id_8abf5ffc_fk_schedulin; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.scheduling_nodeagentbinding
    ADD CONSTRAINT scheduling_nodeagent_cluster_id_8abf5ffc_fk_schedulin FOREIGN KEY (cluster_id) REFERENCES public.scheduling_cluster(id) DEFERRABLE INITIALLY DEFERRED;


--
-- Name: scheduling_nodeagentbinding scheduling_nodeagentbinding_user_id_4dcc88bd_fk_auth_user_id; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.scheduling_nodeagentbinding
    ADD CONSTRAINT scheduling_nodeagentbinding_user_id_4dcc88bd_fk_auth_user_id FOREIGN KEY (user_id) REFERENCES public.auth_user(id) DEFERRABLE INITIALLY DEFERRED;


--
-- Name: scheduling_pod scheduling_pod_cluster_id_c83cb00f_fk_scheduling_cluster_id; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.scheduling_pod
    ADD CONSTRAINT scheduling_pod_cluster_id_c83cb00f_fk_scheduling_cluster_id FOREIGN KEY (cluster_id) REFERENCES public.scheduling_cluster(id) DEFERRABLE INITIALLY DEFERRED;


--
-- Name: scheduling_pod scheduling_pod_namespace_id_2171f8ca_fk_quotas_namespace_id; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.scheduling_pod
    ADD CONSTRAINT scheduling_pod_namespace_id_2171f8ca_fk_quotas_namespace_id FOREIGN KEY (namespace_id) REFERENCES public.quotas_namespace(id) DEFERRABLE INITIALLY DEFERRED;


--
-- Name: scheduling_pod scheduling_pod_podgroup_id_acf05674_fk_scheduling_podgroup_id; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.scheduling_pod
    ADD CONSTRAINT scheduling_pod_podgroup_id_acf05674_fk_scheduling_podgroup_id FOREIGN KEY (podgroup_id) REFERENCES public.scheduling_podgroup(id) DEFERRABLE INITIALLY DEFERRED;


--
-- Name: scheduling_pod scheduling_pod_quota_group_id_97af2c62_fk_quotas_quotagroup_id; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.scheduling_pod
    ADD CONSTRAINT scheduling_pod_quota_group_id_97af2c62_fk_quotas_quotagroup_id FOREIGN KEY (quota_group_id) REFERENCES public.quotas_quotagroup(id) DEFERRABLE INITIALLY DEFERRED;


--
-- Name: scheduling_podgroup scheduling_podgroup_cluster_id_8d3f819e_fk_schedulin; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.scheduling_podgroup
    ADD CONSTRAINT scheduling_podgroup_cluster_id_8d3f819e_fk_schedulin FOREIGN KEY (cluster_id) REFERENCES public.scheduling_cluster(id) DEFERRABLE INITIALLY DEFERRED;


--
-- Name: scheduling_podgroup scheduling_podgroup_namespace_id_92c8c32e_fk_quotas_na; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.scheduling_podgroup
    ADD CONSTRAINT scheduling_podgroup_namespace_id_92c8c32e_fk_quotas_na FOREIGN KEY (namespace_id) REFERENCES public.quotas_namespace(id) DEFERRABLE INITIALLY DEFERRED;


--
-- Name: scheduling_podgroup scheduling_podgroup_queue_id_0d5d662b_fk_quotas_queue_id; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.scheduling_podgroup
    ADD CONSTRAINT scheduling_podgroup_queue_id_0d5d662b_fk_quotas_queue_id FOREIGN KEY (queue_id) REFERENCES public.quotas_queue(id) DEFERRABLE INITIALLY DEFERRED;


--
-- Name: scheduling_podgroupreason scheduling_podgroupr_podgroup_id_cbe06a8e_fk_schedulin; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.scheduling_podgroupreason
    ADD CONSTRAINT scheduling_podgroupr_podgroup_id_cbe06a8e_fk_schedulin FOREIGN KEY (podgroup_id) REFERENCES public.scheduling_podgroup(id) DEFERRABLE INITIALLY DEFERRED;


--
-- Name: scheduling_podgroupreason scheduling_podgroupr_session_id_157ab281_fk_schedulin; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.scheduling_podgroupreason
    ADD CONSTRAINT scheduling_podgroupr_session_id_157ab281_fk_schedulin FOREIGN KEY (session_id) REFERENCES public.scheduling_schedulingsession(id) DEFERRABLE INITIALLY DEFERRED;


--
-- Name: scheduling_quotaoverstate scheduling_quotaover_cluster_id_ba5302c3_fk_schedulin; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.scheduling_quotaoverstate
    ADD CONSTRAINT scheduling_quotaover_cluster_id_ba5302c3_fk_schedulin FOREIGN KEY (cluster_id) REFERENCES public.scheduling_cluster(id) DEFERRABLE INITIALLY DEFERRED;


--
-- Name: scheduling_quotasample scheduling_quotasamp_cluster_id_c4ab22ce_fk_schedulin; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.scheduling_quotasample
    ADD CONSTRAINT scheduling_quotasamp_cluster_id_c4ab22ce_fk_schedulin FOREIGN KEY (cluster_id) REFERENCES public.scheduling_cluster(id) DEFERRABLE INITIALLY DEFERRED;


--
-- Name: scheduling_removedjob scheduling_removedjo_cluster_id_063d46a8_fk_schedulin; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.scheduling_removedjob
    ADD CONSTRAINT scheduling_removedjo_cluster_id_063d46a8_fk_schedulin FOREIGN KEY (cluster_id) REFERENCES public.scheduling_cluster(id) DEFERRABLE INITIALLY DEFERRED;


--
-- Name: scheduling_schedulingsession scheduling_schedulin_cluster_id_53fbe80c_fk_schedulin; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.scheduling_schedulingsession
    ADD CONSTRAINT scheduling_schedulin_cluster_id_53fbe80c_fk_schedulin FOREIGN KEY (cluster_id) REFERENCES public.scheduling_cluster(id) DEFERRABLE INITIALLY DEFERRED;


--
-- Name: scheduling_usagehistory scheduling_usagehist_cluster_id_46ba10c0_fk_schedulin; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.scheduling_usagehistory
    ADD CONSTRAINT scheduling_usagehist_cluster_id_46ba10c0_fk_schedulin FOREIGN KEY (cluster_id) REFERENCES public.scheduling_cluster(id) DEFERRABLE INITIALLY DEFERRED;


--
-- Name: security_apitoken security_apitoken_user_id_18651329_fk_auth_user_id; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.security_apitoken
    ADD CONSTRAINT security_apitoken_user_id_18651329_fk_auth_user_id FOREIGN KEY (user_id) REFERENCES public.auth_user(id) DEFERRABLE INITIALLY DEFERRED;


--
-- PostgreSQL database dump complete
--



-- django_migrations

INSERT INTO public.django_migrations VALUES (1, 'contenttypes', '0001_initial', '2026-11-29 14:05:32.548026+00');
INSERT INTO public.django_migrations VALUES (2, 'auth', '0001_initial', '2026-11-29 14:05:32.61568+00');
INSERT INTO public.django_migrations VALUES (3, 'admin', '0001_initial', '2026-11-29 14:05:32.643898+00');
INSERT INTO public.django_migrations VALUES (4, 'admin', '0002_logentry_remove_auto_add', '2026-11-29 14:05:32.660242+00');
INSERT INTO public.django_migrations VALUES (5, 'admin', '0003_logentry_add_action_flag_choices', '2026-11-29 14:05:32.67781+00');
INSERT INTO public.django_migrations VALUES (6, 'contenttypes', '0002_remove_content_type_name', '2026-11-29 14:05:32.706991+00');
INSERT INTO public.django_migrations VALUES (7, 'auth', '0002_alter_permission_name_max_length', '2026-11-29 14:05:32.714937+00');
INSERT INTO public.django_migrations VALUES (8, 'auth', '0003_alter_user_email_max_length', '2026-11-29 14:05:32.733264+00');
INSERT INTO public.django_migrations VALUES (9, 'auth', '0004_alter_user_username_opts', '2026-11-29 14:05:32.741952+00');
INSERT INTO public.django_migrations VALUES (10, 'auth', '0005_alter_user_last_login_null', '2026-11-29 14:05:32.762951+00');
INSERT INTO public.django_migrations VALUES (11, 'auth', '0006_require_contenttypes_0002', '2026-11-29 14:05:32.76385+00');
INSERT INTO public.django_migrations VALUES (12, 'auth', '0007_alter_validators_add_error_messages', '2026-11-29 14:05:32.778853+00');
INSERT INTO public.django_migrations VALUES (13, 'auth', '0008_alter_user_username_max_length', '2026-11-29 14:05:32.791164+00');
INSERT INTO public.django_migrations VALUES (14, 'auth', '0009_alter_user_last_name_max_length', '2026-11-29 14:05:32.805414+00');
INSERT INTO public.django_migrations VALUES (15, 'auth', '0010_alter_group_name_max_length', '2026-11-29 14:05:32.818639+00');
INSERT INTO public.django_migrations VALUES (16, 'auth', '0011_update_proxy_permissions', '2026-11-29 14:05:32.826515+00');
INSERT INTO public.django_migrations VALUES (17, 'auth', '0012_alter_user_first_name_max_length', '2026-11-29 14:05:32.845008+00');
INSERT INTO public.django_migrations VALUES (18, 'axes', '0001_initial', '2026-11-29 14:05:32.857221+00');
INSERT INTO public.django_migrations VALUES (19, 'axes', '0002_auto_20151217_2044', '2026-11-29 14:05:32.908263+00');
INSERT INTO public.django_migrations VALUES (20, 'axes', '0003_auto_20160322_0929', '2026-11-29 14:05:32.9243+00');
INSERT INTO public.django_migrations VALUES (21, 'axes', '0004_auto_20181024_1538', '2026-11-29 14:05:32.94132+00');
INSERT INTO public.django_migrations VALUES (22, 'axes', '0005_remove_accessattempt_trusted', '2026-11-29 14:05:32.959064+00');
INSERT INTO public.django_migrations VALUES (23, 'axes', '0006_remove_accesslog_trusted', '2026-11-29 14:05:32.96201+00');
INSERT INTO public.django_migrations VALUES (24, 'axes', '0007_alter_accessattempt_unique_together', '2026-11-29 14:05:32.991005+00');
INSERT INTO public.django_migrations VALUES (25, 'axes', '0008_accessfailurelog', '2026-11-29 14:05:33.010398+00');
INSERT INTO public.django_migrations VALUES (26, 'axes', '0009_add_session_hash', '2026-11-29 14:05:33.014393+00');
INSERT INTO public.django_migrations VALUES (27, 'axes', '0010_accessattemptexpiration', '2026-11-29 14:05:33.027982+00');
INSERT INTO public.django_migrations VALUES (28, 'changerequests', '0001_change_requests', '2026-11-29 14:05:33.104892+00');
INSERT INTO public.django_migrations VALUES (29, 'django_celery_beat', '0001_initial', '2026-11-29 14:05:33.186484+00');
INSERT INTO public.django_migrations VALUES (30, 'django_celery_beat', '0002_auto_20161118_0346', '2026-11-29 14:05:33.208117+00');
INSERT INTO public.django_migrations VALUES (31, 'django_celery_beat', '0003_auto_20161209_0049', '2026-11-29 14:05:33.220775+00');
INSERT INTO public.django_migrations VALUES (32, 'django_celery_beat', '0004_auto_20170221_0000', '2026-11-29 14:05:33.225106+00');
INSERT INTO public.django_migrations VALUES (33, 'django_celery_beat', '0005_add_solarschedule_events_choices', '2026-11-29 14:05:33.229358+00');
INSERT INTO public.django_migrations VALUES (34, 'django_celery_beat', '0006_auto_20180322_0932', '2026-11-29 14:05:33.322964+00');
INSERT INTO public.django_migrations VALUES (35, 'django_celery_beat', '0007_auto_20180521_0826', '2026-11-29 14:05:33.355483+00');
INSERT INTO public.django_migrations VALUES (36, 'django_celery_beat', '0008_auto_20180914_1922', '2026-11-29 14:05:33.418655+00');
INSERT INTO public.django_migrations VALUES (37, 'django_celery_beat', '0006_auto_20180210_1226', '2026-11-29 14:05:33.465479+00');
INSERT INTO public.django_migrations VALUES (38, 'django_celery_beat', '0006_periodictask_priority', '2026-11-29 14:05:33.487126+00');
INSERT INTO public.django_migrations VALUES (39, 'django_celery_beat', '0009_periodictask_headers', '2026-11-29 14:05:33.508895+00');
INSERT INTO public.django_migrations VALUES (40, 'django_celery_beat', '0010_auto_20190429_0326', '2026-11-29 14:05:34.03536+00');
INSERT INTO public.django_migrations VALUES (41, 'django_celery_beat', '0011_auto_20190508_0153', '2026-11-29 14:05:34.080554+00');
INSERT INTO public.django_migrations VALUES (42, 'django_celery_beat', '0012_periodictask_expire_seconds', '2026-11-29 14:05:34.107754+00');
INSERT INTO public.django_migrations VALUES (43, 'django_celery_beat', '0013_auto_20200609_0727', '2026-11-29 14:05:34.126367+00');
INSERT INTO public.django_migrations VALUES (44, 'django_celery_beat', '0014_remove_clockedschedule_enabled', '2026-11-29 14:05:34.148649+00');
INSERT INTO public.django_migrations VALUES (45, 'django_celery_beat', '0015_edit_solarschedule_events_choices', '2026-11-29 14:05:34.153872+00');
INSERT INTO public.django_migrations VALUES (46, 'django_celery_beat', '0016_alter_crontabschedule_timezone', '2026-11-29 14:05:34.18365+00');
INSERT INTO public.django_migrations VALUES (47, 'django_celery_beat', '0017_alter_crontabschedule_month_of_year', '2026-11-29 14:05:34.215463+00');
INSERT INTO public.django_migrations VALUES (48, 'django_celery_beat', '0018_improve_crontab_helptext', '2026-11-29 14:05:34.232804+00');
INSERT INTO public.django_migrations VALUES (49, 'django_celery_beat', '0019_alter_periodictasks_options', '2026-11-29 14:05:34.239878+00');
INSERT INTO public.django_migrations VALUES (50, 'identity', '0001_oidc_identities', '2026-11-29 14:05:34.288312+00');
INSERT INTO public.django_migrations VALUES (51, 'quotas', '0001_initial', '2026-11-29 14:05:35.065001+00');
INSERT INTO public.django_migrations VALUES (52, 'quotas', '0002_builtin_nodes', '2026-11-29 14:05:35.440055+00');
INSERT INTO public.django_migrations VALUES (53, 'quotas', '0003_revision_counters', '2026-11-29 14:05:35.452591+00');
INSERT INTO public.django_migrations VALUES (54, 'quotas', '0004_borrowing_lending_limits', '2026-11-29 14:05:35.67927+00');
INSERT INTO public.django_migrations VALUES (55, 'quotas', '0005_queue_job_priority_range', '2026-11-29 14:05:35.79542+00');
INSERT INTO public.django_migrations VALUES (56, 'quotas', '0006_queue_min_runtime', '2026-11-29 14:05:35.858996+00');
INSERT INTO public.django_migrations VALUES (57, 'quotas', '0007_tree_node_description', '2026-11-29 14:05:35.963451+00');
INSERT INTO public.django_migrations VALUES (58, 'scheduling', '0001_initial', '2026-11-29 14:05:36.256627+00');
INSERT INTO public.django_migrations VALUES (59, 'scheduling', '0002_default_cluster', '2026-11-29 14:05:36.315135+00');
INSERT INTO public.django_migrations VALUES (60, 'scheduling', '0003_scheduling_records', '2026-11-29 14:05:36.877569+00');
INSERT INTO public.django_migrations VALUES (61, 'scheduling', '0004_node_agents_group', '2026-11-29 14:05:36.917926+00');
INSERT INTO public.django_migrations VALUES (62, 'scheduling', '0005_node_pools_and_agent_bindings', '2026-11-29 14:05:37.010034+00');
INSERT INTO public.django_migrations VALUES (63, 'scheduling', '0006_podgroup_requeue_state', '2026-11-29 14:05:37.128873+00');
INSERT INTO public.django_migrations VALUES (64, 'scheduling', '0007_dead_nodes_and_outage_grace', '2026-11-29 14:05:37.287317+00');
INSERT INTO public.django_migrations VALUES (65, 'scheduling', '0008_pod_redundant_indexes', '2026-11-29 14:05:37.431811+00');
INSERT INTO public.django_migrations VALUES (66, 'scheduling', '0009_change_feed', '2026-11-29 14:05:37.4934+00');
INSERT INTO public.django_migrations VALUES (67, 'scheduling', '0010_change_feed_triggers', '2026-11-29 14:05:37.575692+00');
INSERT INTO public.django_migrations VALUES (68, 'scheduling', '0011_change_feed_sqlite', '2026-11-29 14:05:37.721405+00');
INSERT INTO public.django_migrations VALUES (69, 'scheduling', '0012_cluster_counters', '2026-11-29 14:05:38.027585+00');
INSERT INTO public.django_migrations VALUES (70, 'scheduling', '0013_usage_history', '2026-11-29 14:05:38.065059+00');
INSERT INTO public.django_migrations VALUES (71, 'scheduling', '0014_kubernetes_adapter', '2026-11-29 14:05:38.360827+00');
INSERT INTO public.django_migrations VALUES (72, 'scheduling', '0015_pod_node_no_db_constraint', '2026-11-29 14:05:38.592077+00');
INSERT INTO public.django_migrations VALUES (73, 'scheduling', '0016_feed_bindings_skip_diff', '2026-11-29 14:05:38.689056+00');
INSERT INTO public.django_migrations VALUES (74, 'scheduling', '0017_pod_binding_indexes', '2026-11-29 14:05:38.996195+00');
INSERT INTO public.django_migrations VALUES (75, 'scheduling', '0018_session_bindings_lz4', '2026-11-29 14:05:39.084085+00');
INSERT INTO public.django_migrations VALUES (76, 'scheduling', '0019_session_timings_help', '2026-11-29 14:05:39.108919+00');
INSERT INTO public.django_migrations VALUES (77, 'scheduling', '0020_session_affinity', '2026-11-29 14:05:39.174935+00');
INSERT INTO public.django_migrations VALUES (78, 'scheduling', '0021_cluster_kubeconfig_encrypted', '2026-11-29 14:05:39.577726+00');
INSERT INTO public.django_migrations VALUES (79, 'scheduling', '0022_encrypt_kubeconfigs', '2026-11-29 14:05:39.668032+00');
INSERT INTO public.django_migrations VALUES (80, 'scheduling', '0023_remove_plaintext_kubeconfig', '2026-11-29 14:05:39.703895+00');
INSERT INTO public.django_migrations VALUES (81, 'scheduling', '0024_node_set_aside', '2026-11-29 14:05:39.733738+00');
INSERT INTO public.django_migrations VALUES (82, 'scheduling', '0025_kube_problem_reason', '2026-11-29 14:05:39.768109+00');
INSERT INTO public.django_migrations VALUES (83, 'scheduling', '0026_gang_releases', '2026-11-29 14:05:40.160454+00');
INSERT INTO public.django_migrations VALUES (84, 'scheduling', '0027_eviction_owners_removed_jobs', '2026-11-29 14:05:40.600668+00');
INSERT INTO public.django_migrations VALUES (85, 'scheduling', '0028_backfill_eviction_owners', '2026-11-29 14:05:40.748027+00');
INSERT INTO public.django_migrations VALUES (86, 'scheduling', '0029_job_actions', '2026-11-29 14:05:41.56303+00');
INSERT INTO public.django_migrations VALUES (87, 'scheduling', '0030_job_history', '2026-11-29 14:05:41.677731+00');
INSERT INTO public.django_migrations VALUES (88, 'security', '0001_api_tokens', '2026-11-29 14:05:41.80713+00');
INSERT INTO public.django_migrations VALUES (89, 'security', '0002_hash_drf_tokens', '2026-11-29 14:05:41.92042+00');
INSERT INTO public.django_migrations VALUES (90, 'security', '0003_security_events', '2026-11-29 14:05:41.964673+00');
INSERT INTO public.django_migrations VALUES (91, 'security', '0004_roles_synced_event', '2026-11-29 14:05:41.97778+00');
INSERT INTO public.django_migrations VALUES (92, 'sessions', '0001_initial', '2026-11-29 14:05:42.006291+00');
SELECT pg_catalog.setval('public.django_migrations_id_seq', 92, true);
