//! `backends serve`: the results service (issue 44 item 5). One command
//! serves the WebGPU page (`/`), the results site of its database
//! (`/site/`), and takes the page's result files (`POST /upload`, what its
//! "Send my results" button sends) into the database, so any browser that
//! opens the page adds its GPU to the site.
//!
//! An upload is checked exactly as `backends import --target webgpu` and
//! `db import` check a result file (header, suite fingerprint, every line
//! at its place, counts), in `store.rs` ([`Service::store`]); what is refused stores nothing.
//! Each accepted upload keeps its provenance: its lines, where it came
//! from and when (`provenance.json`), and what the import made of it, in
//! a folder of its own under `--uploads`. The database only grows: an
//! import adds runs, never replaces or deletes one, and the same runs
//! sent twice count once (the importer's content identity). Uploads are
//! taken one at a time (the database's transactions would also keep two
//! apart), at most `--max-upload` bytes (413 beyond), at most
//! `--per-minute` per client address (429 beyond). The site is written
//! again after each upload that stored runs.
//!
//! HTTP is axum on tokio (the ecosystem's stack), listening on loopback by
//! default.

mod store;

use crate::excerpt::printable;
use axum::body::Bytes;
use axum::extract::{ConnectInfo, DefaultBodyLimit, Path as UrlPath, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use clap::Args;
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub use store::Service;

#[derive(Args, Debug, Clone)]
pub struct ServeArgs {
    /// The SQLite results database uploads are stored in (created if
    /// missing, as by `db import`).
    #[arg(long, value_name = "FILE")]
    pub db: PathBuf,
    /// The WebGPU page to serve at `/` (`backends emit --target webgpu`).
    #[arg(long, value_name = "FILE")]
    pub page: PathBuf,
    /// The suite the page was emitted from (several paths: as for
    /// `emit`): every upload is checked against it, as by `backends
    /// import`.
    #[arg(required = true, value_name = "SUITE")]
    pub suite: Vec<PathBuf>,
    /// Where each upload's lines, provenance and import are kept, and the
    /// site is written (default: the database's path with `.uploads`).
    #[arg(long, value_name = "DIR")]
    pub uploads: Option<PathBuf>,
    /// The address to listen on; port 0 takes a free one. The address
    /// served is printed on the first line of standard output.
    #[arg(long, default_value = "127.0.0.1:8080", value_name = "ADDR")]
    pub bind: String,
    /// The largest upload taken, in bytes (a bigger one is refused with
    /// 413 and stores nothing).
    #[arg(long, default_value_t = 16 << 20, value_name = "BYTES")]
    pub max_upload: usize,
    /// Uploads taken per client address per minute (more are refused with
    /// 429 and store nothing).
    #[arg(long, default_value_t = 6, value_name = "N")]
    pub per_minute: usize,
}

/// `backends serve`: runs until killed; exit 2 when it cannot start (a
/// page or suite that cannot be read or do not match, an address in use).
pub fn main(args: &ServeArgs) -> ExitCode {
    match run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => progress_litmus::exit::Failure::input(e).exit(),
    }
}

/// What the handlers share: the service and the per-client counts.
struct Shared {
    service: Service,
    recent: Mutex<HashMap<IpAddr, Vec<Instant>>>,
    per_minute: usize,
}

fn run(args: &ServeArgs) -> Result<(), String> {
    let service = Service::open(args)?;
    let shared = Arc::new(Shared {
        service,
        recent: Mutex::new(HashMap::new()),
        per_minute: args.per_minute,
    });
    let app = Router::new()
        .route("/", get(page))
        .route("/site", get(site_index))
        .route("/site/", get(site_index))
        .route("/site/{*file}", get(site_file))
        .route("/upload", post(upload))
        .layer(DefaultBodyLimit::max(args.max_upload))
        .with_state(shared.clone());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the server: {e}"))?;
    rt.block_on(async {
        let listener = tokio::net::TcpListener::bind(&args.bind)
            .await
            .map_err(|e| format!("{}: cannot listen: {e}", printable(&args.bind)))?;
        let addr = listener
            .local_addr()
            .map_err(|e| format!("cannot listen: {e}"))?;
        println!(
            "serving http://{addr}/ (the page), http://{addr}/site/ (the results of {})",
            shared.service.db().display()
        );
        use std::io::Write;
        let _ = std::io::stdout().flush();
        axum::serve(
            listener,
            app.into_make_service_with_connect_info::<SocketAddr>(),
        )
        .await
        .map_err(|e| format!("the server stopped: {e}"))
    })
}

fn html(body: String) -> Response {
    ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], body).into_response()
}

async fn page(State(s): State<Arc<Shared>>) -> Response {
    html(s.service.page().to_string())
}

async fn site_index(State(s): State<Arc<Shared>>) -> Response {
    site_page(&s, "index.html")
}

async fn site_file(State(s): State<Arc<Shared>>, UrlPath(file): UrlPath<String>) -> Response {
    site_page(&s, &file)
}

/// A page of the site: `index.html` or `devices/NAME.html` (the names
/// [`crate::report::site::page_name`] makes), nothing else.
fn site_page(s: &Shared, file: &str) -> Response {
    match s.service.site_page(file) {
        Some(text) => html(text),
        None => (StatusCode::NOT_FOUND, "no such page\n").into_response(),
    }
}

/// A JSON answer `{"message": ...}` or `{"error": ...}`.
fn answer(status: StatusCode, key: &str, text: &str) -> Response {
    let body = serde_json::json!({ key: text }).to_string();
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

impl Shared {
    /// Counts an upload of `ip`; false when it already sent
    /// `per_minute` in the last minute.
    fn admit(&self, ip: IpAddr) -> bool {
        let now = Instant::now();
        let mut recent = self.recent.lock().unwrap_or_else(|e| e.into_inner());
        recent.retain(|_, v| {
            v.retain(|t| now.duration_since(*t) < Duration::from_secs(60));
            !v.is_empty()
        });
        let mine = recent.entry(ip).or_default();
        if mine.len() >= self.per_minute {
            return false;
        }
        mine.push(now);
        true
    }
}

async fn upload(
    State(s): State<Arc<Shared>>,
    ConnectInfo(from): ConnectInfo<SocketAddr>,
    body: Bytes,
) -> Response {
    if !s.admit(from.ip()) {
        return answer(
            StatusCode::TOO_MANY_REQUESTS,
            "error",
            &format!(
                "more than {} uploads from this address in a minute: try again later",
                s.per_minute
            ),
        );
    }
    let shared = s.clone();
    let done =
        tokio::task::spawn_blocking(move || shared.service.store(&from.ip().to_string(), &body))
            .await;
    match done {
        Ok(Ok(message)) => answer(StatusCode::OK, "message", &message),
        Ok(Err(e)) => answer(StatusCode::BAD_REQUEST, "error", &e),
        Err(_) => answer(
            StatusCode::INTERNAL_SERVER_ERROR,
            "error",
            "the upload could not be processed",
        ),
    }
}
