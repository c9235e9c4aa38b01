/**
 * A count per day as bars (uploads on the dashboard, downloads on the downloads page). The
 * caption says what the bars show; each page also gives the figures as text for screen readers.
 */
export function DayBars({ days, what, caption }: { days: ReadonlyArray<{ day: string; count: number }>; what: string; caption?: string }) {
  const max = Math.max(1, ...days.map((d) => d.count));
  const width = 14;
  const height = 80;
  return (
    <figure className="chart">
      <svg viewBox={`0 0 ${days.length * width} ${height + 2}`} role="img" aria-label={`${what} per day over the last ${days.length} days`} preserveAspectRatio="none">
        {days.map((d, i) => {
          const h = Math.round((d.count / max) * height);
          return <rect key={d.day} x={i * width + 2} y={height - h} width={width - 4} height={Math.max(h, 1)} className={d.count ? 'bar' : 'bar empty'}><title>{`${d.day}: ${d.count}`}</title></rect>;
        })}
      </svg>
      <figcaption className="muted">{what} per day, {days[0]?.day} to {days.at(-1)?.day}{caption ? `: ${caption}` : ''}</figcaption>
    </figure>
  );
}
